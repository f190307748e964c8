import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { rolloutTrace } from '../../src/traces/export.js';
import { alight } from '../helpers/cli.js';
import { expectExactAndLinear } from '../helpers/exact.js';
import { type Rig, rolloutEnv, startRig } from '../helpers/gateway.js';
import type { Reply } from '../helpers/scripted-upstream.js';

let rig: Rig;
afterEach(async () => rig?.close());

type Obj = Record<string, unknown>;

/** Reads a.txt, then b.txt, then answers with what the tools returned: two tool turns and an answer. */
function toolReply(_i: number, body: Obj): Reply {
  const results = (body.messages as Obj[]).filter((m) => m.role === 'tool').map((m) => m.content);
  if (results.length < 2)
    return {
      text: results.length ? 'next ' : '',
      toolCalls: [{ name: 'read_file', arguments: `{"path": "${results.length ? 'b' : 'a'}.txt"}` }],
    };
  return { text: `files say ${results.join(' and ')}` };
}

const readFile = {
  name: 'read_file',
  description: 'Read a file',
  input_schema: { type: 'object' as const, properties: { path: { type: 'string' } }, required: ['path'] },
};

describe('Anthropic Messages through the gateway (the anthropic SDK)', () => {
  it('runs two tool turns and an answer, whole and streamed, recorded token-exact with both sides', async () => {
    rig = await startRig({ reply: toolReply });
    const { rollout, token } = rig.gateway.rollouts.create({ run: 'r' });
    const client = new Anthropic({ baseURL: `${rig.gateway.url}/r/${token}`, apiKey: token, maxRetries: 0 });
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'read the files' }];
    const ask = {
      model: 'claude-sonnet-4-5',
      max_tokens: 200,
      system: [{ type: 'text' as const, text: 'You read files.' }],
      tools: [readFile],
    };

    const first = await client.messages.create({ ...ask, messages });
    expect(first).toMatchObject({
      model: 'claude-sonnet-4-5',
      stop_reason: 'tool_use',
      content: [{ type: 'tool_use', name: 'read_file', input: { path: 'a.txt' } }],
    });
    const useA = first.content[0] as Anthropic.ToolUseBlock;
    messages.push(
      { role: 'assistant', content: first.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: useA.id, content: 'alpha' }] },
    );

    const events: string[] = [];
    const stream = client.messages.stream({ ...ask, messages });
    stream.on('streamEvent', (e) =>
      events.push(e.type === 'content_block_delta' ? `${e.type}:${e.delta.type}` : e.type),
    );
    const second = await stream.finalMessage();
    expect(second).toMatchObject({
      stop_reason: 'tool_use',
      content: [
        { type: 'text', text: 'next ' },
        { type: 'tool_use', input: { path: 'b.txt' } },
      ],
    });
    expect(events).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta:text_delta',
      'content_block_stop',
      'content_block_start',
      // Tool input comes whole at the block's end (as the object the whole answer has).
      'content_block_delta:input_json_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    const useB = second.content[1] as Anthropic.ToolUseBlock;
    messages.push(
      { role: 'assistant', content: second.content },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: useB.id, content: [{ type: 'text', text: 'beta' }] }],
      },
    );

    const third = await client.messages.stream({ ...ask, messages }).finalMessage();
    expect(third).toMatchObject({
      stop_reason: 'end_turn',
      content: [{ type: 'text', text: 'files say alpha and beta' }],
    });
    expect(third.usage.output_tokens).toBe(rig.upstream.log[2].completionIds.length);

    const trace = expectExactAndLinear(rig, rollout.id);
    expect(trace.calls.map((c) => [c.protocol, c.stream, c.status])).toEqual([
      ['anthropic.messages', false, 'ok'],
      ['anthropic.messages', true, 'ok'],
      ['anthropic.messages', true, 'ok'],
    ]);
    // The chat side repeats the model's own tool-call text (`{"path": "a.txt"}`, not the SDK's re-serialised object).
    expect((trace.calls[2].request.messages as Obj[]).slice(0, 4)).toEqual([
      { role: 'system', content: 'You read files.' },
      { role: 'user', content: 'read the files' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: useA.id, type: 'function', function: { name: 'read_file', arguments: '{"path": "a.txt"}' } },
        ],
      },
      { role: 'tool', tool_call_id: useA.id, content: 'alpha' },
    ]);
    expect(trace.calls[2].harness?.request).toMatchObject({
      model: 'claude-sonnet-4-5',
      messages: messages.map(() => expect.anything()),
    });
    expect(trace.calls[2].harness?.response).toMatchObject({
      type: 'message',
      content: [{ text: 'files say alpha and beta' }],
    });
    // No token fields and the upstream's model name reached the harness.
    expect(JSON.stringify(first)).not.toMatch(/token_ids|scripted-model/);
  });

  it("counts tokens with the upstream tokenizer, and answers errors in Anthropic's shape", async () => {
    rig = await startRig({
      script: (i) => (i === 0 ? 'drop-mid-stream' : 'ok'),
      reply: () => 'a longer answer that is cut',
    });
    const { rollout, token } = rig.gateway.rollouts.create({ run: 'r' });
    const client = new Anthropic({ baseURL: `${rig.gateway.url}/r/${token}`, apiKey: token, maxRetries: 0 });
    const counted = await client.messages.countTokens({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    // The scripted tokenizer's template: <|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n.
    expect(counted).toEqual({ input_tokens: 21 });

    const bad = await fetch(`${rig.gateway.url}/r/${token}/v1/messages?beta=true`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"messages": "no"}',
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({
      type: 'error',
      error: { type: 'invalid_request_error', message: expect.stringMatching(/messages/) },
    });
    await expect(client.messages.create({ model: 'm', max_tokens: 0, messages: [] })).rejects.toBeInstanceOf(
      Anthropic.BadRequestError,
    );
    const unknown = await fetch(`${rig.gateway.url}/r/alt_nope/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'alt_nope' },
      body: '{}',
    });
    expect(await unknown.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });

    // The upstream breaks mid-stream: the SDK raises the error event, and the call is recorded as an error.
    await expect(
      client.messages
        .stream({ model: 'm', max_tokens: 50, messages: [{ role: 'user', content: 'go' }] })
        .finalMessage(),
    ).rejects.toThrow(/mid-stream|upstream/);
    const calls = rolloutTrace(rig.store, rollout.id).calls;
    expect(calls.map((c) => c.status)).toEqual(['error']);
    expect(calls[0].harness?.response).toBeNull();
  });
});

describe('OpenAI Responses through the gateway (the openai SDK)', () => {
  const tools: OpenAI.Responses.Tool[] = [
    {
      type: 'function',
      name: 'read_file',
      description: 'Read a file',
      strict: false,
      parameters: readFile.input_schema,
    },
    { type: 'web_search' },
    // A name with a terminal escape: shown escaped, never sent to the terminal.
    { type: 'custom', name: 'evil\u001b[2J' } as unknown as OpenAI.Responses.Tool,
  ];

  it('runs two tool turns and an answer, stateless and with previous_response_id, recorded token-exact', async () => {
    rig = await startRig({ reply: toolReply });
    const { rollout, token } = rig.gateway.rollouts.create({ run: 'r' });
    const client = new OpenAI({ baseURL: `${rig.gateway.url}/r/${token}/v1`, apiKey: token, maxRetries: 0 });
    const input: OpenAI.Responses.ResponseInputItem[] = [{ role: 'user', content: 'read the files' }];

    const first = await client.responses.create({
      model: 'gpt-5',
      instructions: 'You read files.',
      input,
      tools,
      store: false,
    });
    expect(first).toMatchObject({
      model: 'gpt-5',
      status: 'completed',
      output: [{ type: 'function_call', name: 'read_file', arguments: '{"path": "a.txt"}' }],
    });
    const callA = first.output[0] as OpenAI.Responses.ResponseFunctionToolCall;
    input.push(callA, { type: 'function_call_output', call_id: callA.call_id, output: 'alpha' });
    // responses.retrieve: the answer the rollout was given; an id it never saw is the API's 404.
    expect(await client.responses.retrieve(first.id)).toEqual(first);
    const unknown = await client.responses.retrieve('resp_nope').catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);

    const events: string[] = [];
    const stream = client.responses.stream({
      model: 'gpt-5',
      instructions: 'You read files.',
      input,
      tools,
      store: false,
    });
    stream.on('event', (e) => events.push(e.type));
    const second = await stream.finalResponse();
    expect(second.output.map((o) => o.type)).toEqual(['message', 'function_call']);
    expect(second.output_text).toBe('next ');
    expect(events).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const callB = second.output[1] as OpenAI.Responses.ResponseFunctionToolCall;

    // The last turn names the previous response instead of resending the history: the gateway rebuilds it.
    const third = await client.responses.create({
      model: 'gpt-5',
      instructions: 'You read files.',
      previous_response_id: second.id,
      tools,
      input: [{ type: 'function_call_output', call_id: callB.call_id, output: 'beta' }],
    });
    expect(third.output_text).toBe('files say alpha and beta');
    expect(third.usage?.output_tokens).toBe(rig.upstream.log[2].completionIds.length);

    const trace = expectExactAndLinear(rig, rollout.id);
    expect(trace.calls.map((c) => c.protocol)).toEqual(['openai.responses', 'openai.responses', 'openai.responses']);
    expect(trace.calls[2].harness?.request).toMatchObject({ previous_response_id: second.id });
    // web_search cannot run upstream: left out, and said so once on the rollout.
    expect((trace.calls[0].request.tools as Obj[]).map((t) => (t.function as Obj).name)).toEqual(['read_file']);
    expect(
      rig.store
        .events(rollout.id)
        .filter((e) => e.type === 'untranslated')
        .map((e) => JSON.parse(e.data)),
    ).toEqual([{ kind: 'tools', names: ['web_search', 'evil\u001b[2J'] }]);
    const shown = await alight(['traces', 'show', rollout.id, '--db', join(rig.dir, 'alight.db')]);
    expect(shown.stdout).toContain(
      'left out when translating for the upstream (it cannot run them): tools web_search, evil\\u001b[2J',
    );
    expect(shown.stdout).not.toContain('\u001b');
  });

  it('answers malformed bodies in the OpenAI shape and ends a broken stream with response.failed', async () => {
    rig = await startRig({
      script: (i) => (i === 0 ? 'drop-mid-stream' : 'ok'),
      reply: () => 'a longer answer that is cut',
    });
    const { rollout, token } = rig.gateway.rollouts.create({ run: 'r' });
    const client = new OpenAI({ baseURL: `${rig.gateway.url}/r/${token}/v1`, apiKey: token, maxRetries: 0 });
    await expect(client.responses.create({ model: 'm', input: 5 as unknown as string })).rejects.toMatchObject({
      status: 400,
      error: { message: expect.stringMatching(/input/) },
    });
    await expect(
      client.responses.create({ model: 'm', input: 'x', previous_response_id: 'resp_unknown' }),
    ).rejects.toMatchObject({ status: 400 });
    const events: string[] = [];
    const stream = await client.responses.create({ model: 'm', input: 'go', stream: true });
    for await (const e of stream) events.push(e.type);
    expect(events.at(-1)).toBe('response.failed');
    expect(rolloutTrace(rig.store, rollout.id).calls.map((c) => c.status)).toEqual(['error']);
  });
});

describe('agent frameworks on their default (Responses) models', () => {
  const files: Record<string, string> = { 'a.txt': 'alpha', 'b.txt': 'beta' };

  it("runs a tool-using turn with the AI SDK's default openai provider", async () => {
    const { generateText, stepCountIs, tool } = await import('ai');
    const { createOpenAI } = await import('@ai-sdk/openai');
    const { z } = await import('zod');
    rig = await startRig({ reply: toolReply });
    const { rollout, token } = rig.gateway.rollouts.create({ run: 'r' });
    const provider = createOpenAI({ baseURL: `${rig.gateway.url}/r/${token}/v1`, apiKey: token });
    const result = await generateText({
      model: provider('qwen'),
      prompt: 'read the files',
      stopWhen: stepCountIs(4),
      tools: {
        read_file: tool({
          description: 'Read a file',
          inputSchema: z.object({ path: z.string() }),
          execute: async ({ path }) => files[path],
        }),
      },
    });
    expect(result.text).toBe('files say alpha and beta');
    const trace = expectExactAndLinear(rig, rollout.id);
    // The AI SDK re-serialises tool arguments and refers to earlier output items by id (item_reference): the chat side
    // still repeats the model's own text, so the prompts extend each other.
    expect(JSON.stringify(trace.calls[2].harness?.request.input)).toMatch(
      /"arguments":"\{\\"path\\":\\"a.txt\\"\}".*item_reference/,
    );
  });

  it("runs a tool-using turn with the AI SDK's Anthropic provider on the contract's environment alone", async () => {
    const { generateText, stepCountIs, tool } = await import('ai');
    const { createAnthropic } = await import('@ai-sdk/anthropic');
    const { z } = await import('zod');
    rig = await startRig({ reply: toolReply });
    const { rollout, token, env } = rolloutEnv(rig);
    // The provider reads ANTHROPIC_BASE_URL as the API root (where Anthropic's SDKs add /v1) and appends /messages.
    const saved = { ...process.env };
    Object.assign(process.env, {
      ANTHROPIC_BASE_URL: env.ANTHROPIC_BASE_URL,
      ANTHROPIC_API_KEY: env.ANTHROPIC_API_KEY,
    });
    try {
      const result = await generateText({
        model: createAnthropic()('claude-sonnet-4-5'),
        prompt: 'read the files',
        stopWhen: stepCountIs(4),
        tools: {
          read_file: tool({
            description: 'Read a file',
            inputSchema: z.object({ path: z.string() }),
            execute: async ({ path }) => files[path],
          }),
        },
      });
      expect(result.text).toBe('files say alpha and beta');
    } finally {
      process.env = saved;
    }
    const trace = expectExactAndLinear(rig, rollout.id);
    expect(trace.calls).toHaveLength(3);
    expect(new Set(trace.calls.map((c) => c.protocol))).toEqual(new Set(['anthropic.messages']));
    // Its token counting joins the same way.
    const counted = await fetch(`${env.ANTHROPIC_BASE_URL}/messages/count_tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': token },
      body: JSON.stringify({ model: 'any', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(counted.status).toBe(200);
    expect((await counted.json()).input_tokens).toBeGreaterThan(0);
  });

  it("merges into one row a LangChain ChatOpenAI agent that re-serialises the model's tool arguments", async () => {
    const { ChatOpenAI } = await import('@langchain/openai');
    const { HumanMessage, ToolMessage } = await import('@langchain/core/messages');
    rig = await startRig({ reply: toolReply });
    const { rollout, token } = rig.gateway.rollouts.create({ run: 'r' });
    const sent: Obj[] = [];
    const model = new ChatOpenAI({
      model: 'qwen',
      apiKey: token,
      maxRetries: 0,
      configuration: {
        baseURL: `${rig.gateway.url}/r/${token}/v1`,
        fetch: async (url: RequestInfo | URL, init?: RequestInit) => {
          sent.push(JSON.parse(String(init?.body)));
          return fetch(url, init);
        },
      },
    }).bindTools([{ type: 'function', function: { ...readFile, parameters: readFile.input_schema } }]);
    const history: InstanceType<typeof HumanMessage | typeof ToolMessage>[] = [new HumanMessage('read the files')];
    for (let turn = 0; turn < 4; turn++) {
      const answer = await model.invoke(history);
      history.push(answer as never);
      if (!answer.tool_calls?.length) break;
      for (const call of answer.tool_calls)
        history.push(new ToolMessage({ content: files[call.args.path as string], tool_call_id: call.id! }));
    }
    expect(history.at(-1)!.content).toBe('files say alpha and beta');
    // The model wrote {"path": "a.txt"}; LangChain parsed it and sends back its own serialisation.
    const returned = (sent[1].messages as Obj[]).find((m) => m.role === 'assistant') as Obj;
    expect((returned.tool_calls as Obj[])[0]).toMatchObject({ function: { arguments: '{"path":"a.txt"}' } });
    // The gateway put the model's own text back: each prompt extends the one before, one row for the rollout.
    expectExactAndLinear(rig, rollout.id);
    const upstream = (rig.upstream.log[1].request.messages as Obj[]).find((m) => m.role === 'assistant') as Obj;
    expect((upstream.tool_calls as Obj[])[0]).toMatchObject({ function: { arguments: '{"path": "a.txt"}' } });
  });

  it("runs a tool-using turn with the OpenAI Agents SDK's default model", async () => {
    const agents = await import('@openai/agents');
    const { z } = await import('zod');
    rig = await startRig({ reply: toolReply });
    const { rollout, token } = rig.gateway.rollouts.create({ run: 'r' });
    agents.setTracingDisabled(true);
    // The Agents SDK pins its own copy of the openai package; the client is the same class at runtime.
    const client = new OpenAI({ baseURL: `${rig.gateway.url}/r/${token}/v1`, apiKey: token, maxRetries: 0 });
    agents.setDefaultOpenAIClient(client as unknown as Parameters<typeof agents.setDefaultOpenAIClient>[0]);
    const readTool = agents.tool({
      name: 'read_file',
      description: 'Read a file',
      parameters: z.object({ path: z.string() }),
      execute: async ({ path }) => files[path],
    });
    const agent = new agents.Agent({
      name: 'reader',
      instructions: 'You read files.',
      model: 'qwen',
      tools: [readTool],
    });
    const result = await agents.run(agent, 'read the files');
    expect(result.finalOutput).toBe('files say alpha and beta');
    expect(expectExactAndLinear(rig, rollout.id).calls.map((c) => c.protocol)).toEqual([
      'openai.responses',
      'openai.responses',
      'openai.responses',
    ]);
  });
});
