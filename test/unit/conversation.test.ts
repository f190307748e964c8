import { describe, expect, it } from 'vitest';
import { noRedactions, type RecordedCall, rolloutConversations } from '../../src/samples/conversation.js';

const call = (protocol: string, request: object, response: object | null): RecordedCall => ({
  protocol,
  request: request as Record<string, unknown>,
  response: response as Record<string, unknown> | null,
  harness: null,
});

const chatCall = (args: unknown) =>
  call(
    'openai.chat',
    {
      messages: [
        { role: 'developer', content: 'be brief' },
        { role: 'user', content: [{ type: 'text', text: 'list' }] },
      ],
      tools: [{ type: 'function', function: { name: 'ls', parameters: { type: 'object' } } }],
    },
    {
      choices: [
        {
          message: {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'ls', arguments: args } }],
          },
        },
      ],
    },
  );

describe('foreign traces as chat messages', () => {
  it('gives tool-call arguments as one object, whether they came as a JSON string or an object', () => {
    const asString = rolloutConversations([chatCall('{"path": "."}')], false, noRedactions());
    const asObject = rolloutConversations([chatCall({ path: '.' })], false, noRedactions());
    expect(asString).toEqual(asObject);
    expect(asString[0].messages).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'list' },
      { role: 'assistant', content: '', tool_calls: [{ id: 'c1', name: 'ls', arguments: { path: '.' } }] },
    ]);
    expect(asString[0].tools).toEqual([{ type: 'function', function: { name: 'ls', parameters: { type: 'object' } } }]);
    expect(() => rolloutConversations([chatCall('{"path": ')], false, noRedactions())).toThrow(/not JSON/);
    expect(() => rolloutConversations([chatCall('"."')], false, noRedactions())).toThrow(/not a JSON object/);
  });

  it('drops Anthropic signatures and redacted thinking, keeps thinking only when asked, and counts them', () => {
    const ask = {
      system: [{ type: 'text', text: 'you read files' }],
      tools: [
        { name: 'read', description: 'read a file', input_schema: { type: 'object' } },
        { type: 'web_search_20250305', name: 'web_search' },
      ],
      messages: [
        { role: 'user', content: 'what is in a.txt' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'look first', signature: 'SIG-1' },
            { type: 'redacted_thinking', data: 'BLOB-1' },
            { type: 'tool_use', id: 't1', name: 'read', input: { path: 'a.txt' } },
          ],
        },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 't1',
              content: [{ type: 'text', text: 'no such file' }],
              is_error: true,
            },
            { type: 'text', text: 'try b' },
          ],
        },
      ],
    };
    const answer = {
      content: [
        { type: 'thinking', thinking: 'b then', signature: 'SIG-2' },
        { type: 'text', text: 'b says hi' },
      ],
    };
    for (const keep of [false, true]) {
      const counts = noRedactions();
      const [c] = rolloutConversations([call('anthropic.messages', ask, answer)], keep, counts);
      const thought = (text: string) => (keep ? { reasoning_content: text } : {});
      expect(c.messages).toEqual([
        { role: 'system', content: 'you read files' },
        { role: 'user', content: 'what is in a.txt' },
        {
          role: 'assistant',
          content: '',
          ...thought('look first'),
          tool_calls: [{ id: 't1', name: 'read', arguments: { path: 'a.txt' } }],
        },
        { role: 'tool', content: 'no such file', tool_call_id: 't1' },
        { role: 'user', content: 'try b' },
        { role: 'assistant', content: 'b says hi', ...thought('b then') },
      ]);
      // The hosted web search has no schema a student could call: left out.
      expect(c.tools.map((t) => t.function.name)).toEqual(['read']);
      expect(counts).toMatchObject({ signature: 2, redacted_thinking: 1, thinking: keep ? 0 : 2 });
      expect(JSON.stringify(c)).not.toMatch(/SIG-|BLOB-/);
    }
  });

  it('drops encrypted Responses reasoning and joins an assistant turn of reasoning, text and calls', () => {
    const ask = {
      instructions: 'you add',
      tools: [{ type: 'function', name: 'add', parameters: { type: 'object' } }, { type: 'web_search' }],
      input: [
        { role: 'user', content: 'add 2 and 3' },
        {
          type: 'reasoning',
          id: 'r1',
          summary: [{ type: 'summary_text', text: 'use the tool' }],
          encrypted_content: 'ENC-1',
        },
        { type: 'function_call', call_id: 'f1', name: 'add', arguments: '{"a":2,"b":3}' },
        { type: 'function_call_output', call_id: 'f1', output: '5' },
      ],
    };
    const answer = {
      output: [
        { type: 'reasoning', id: 'r2', summary: [], encrypted_content: 'ENC-2' },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'it is 5' }] },
      ],
    };
    const counts = noRedactions();
    const [c] = rolloutConversations([call('openai.responses', ask, answer)], false, counts);
    expect(c.messages).toEqual([
      { role: 'system', content: 'you add' },
      { role: 'user', content: 'add 2 and 3' },
      { role: 'assistant', content: '', tool_calls: [{ id: 'f1', name: 'add', arguments: { a: 2, b: 3 } }] },
      { role: 'tool', content: '5', tool_call_id: 'f1' },
      { role: 'assistant', content: 'it is 5' },
    ]);
    expect(counts).toMatchObject({ encrypted_reasoning: 2, thinking: 1 });
    expect(JSON.stringify(c)).not.toMatch(/ENC-/);
    expect(() =>
      rolloutConversations(
        [call('openai.responses', { input: [{ type: 'item_reference', id: 'x' }] }, null)],
        false,
        noRedactions(),
      ),
    ).toThrow(/item_reference cannot be rendered/);
  });

  it('keeps one conversation per thread: a call that a later one continues is not an example of its own', () => {
    const first = call(
      'openai.chat',
      { messages: [{ role: 'user', content: 'a' }] },
      { choices: [{ message: { content: 'b' } }] },
    );
    const second = call(
      'openai.chat',
      {
        messages: [
          { role: 'user', content: 'a' },
          { role: 'assistant', content: 'b' },
          { role: 'user', content: 'c' },
        ],
      },
      { choices: [{ message: { content: 'd' } }] },
    );
    const sub = call(
      'openai.chat',
      { messages: [{ role: 'user', content: 'sub-task' }] },
      { choices: [{ message: { content: 'e' } }] },
    );
    const kept = rolloutConversations([first, sub, second], false, noRedactions());
    expect(kept.map((c) => c.messages.map((m) => m.content).join(' '))).toEqual(['sub-task e', 'a b c d']);
    expect(() =>
      rolloutConversations([call('openai.completions', { prompt: 'x' }, null)], false, noRedactions()),
    ).toThrow(/not conversations/);
  });
});
