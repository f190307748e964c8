import { describe, expect, it } from 'vitest';
import { geminiError, geminiResponse } from '../../src/gateway/protocols/gemini-answer.js';
import { geminiToChat, invalidGemini } from '../../src/gateway/protocols/gemini-request.js';
import type { RolloutMemory } from '../../src/gateway/protocols/index.js';

type Obj = Record<string, unknown>;

/** A rollout memory that knows one earlier call's argument text, and records what translations dropped. */
function memory(dropped: string[][] = []): RolloutMemory {
  return {
    earlier: () => null,
    item: () => undefined,
    toolArguments: (id) => (id === 'call_known' ? '{"path":  "a.txt"}' : undefined),
    dropped: (_kind, names) => dropped.push(names),
  };
}

describe('Gemini requests as chat/completions (golden)', () => {
  it('maps the system instruction, turns, thoughts, calls and responses; signatures never reach the prompt', () => {
    const dropped: string[][] = [];
    const chat = geminiToChat(
      {
        systemInstruction: { parts: [{ text: 'You read files.' }, { text: 'Be brief.' }] },
        contents: [
          { role: 'user', parts: [{ text: 'read a' }] },
          {
            role: 'model',
            parts: [
              { text: 'I should read it.', thought: true, thoughtSignature: 'c2lnbmF0dXJl' },
              { text: 'Reading.' },
              { functionCall: { id: 'call_known', name: 'read', args: { path: 'a.txt' } }, thoughtSignature: 'c2ln' },
            ],
          },
          {
            role: 'user',
            parts: [{ functionResponse: { id: 'call_known', name: 'read', response: { output: 'alpha' } } }],
          },
        ],
        tools: [
          {
            functionDeclarations: [
              { name: 'read', parametersJsonSchema: { type: 'object', properties: { path: { type: 'string' } } } },
            ],
          },
          { googleSearch: {} },
        ],
        toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['read'] } },
      },
      memory(dropped),
      true,
    );
    expect(chat.messages).toEqual([
      { role: 'system', content: 'You read files.Be brief.' },
      { role: 'user', content: 'read a' },
      {
        role: 'assistant',
        content: 'Reading.',
        reasoning: 'I should read it.',
        // The model's own text of that call, by its id.
        tool_calls: [
          { id: 'call_known', type: 'function', function: { name: 'read', arguments: '{"path":  "a.txt"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_known', content: '{"output":"alpha"}' },
    ]);
    expect(JSON.stringify(chat)).not.toMatch(/c2ln/);
    expect(chat).toMatchObject({
      stream: true,
      tools: [{ type: 'function', function: { name: 'read', parameters: { type: 'object' } } }],
      tool_choice: { type: 'function', function: { name: 'read' } },
    });
    expect(dropped).toEqual([['googleSearch']]);
  });

  it('turns OpenAPI schemas (types in capitals) into JSON Schema, and NONE into no tool calls', () => {
    const chat = geminiToChat(
      {
        contents: [{ parts: [{ text: 'hi' }] }],
        tools: [
          {
            functionDeclarations: [
              {
                name: 'f',
                description: 'F',
                parameters: { type: 'OBJECT', properties: { n: { type: 'INTEGER', enum: ['A'] } }, required: ['n'] },
              },
            ],
          },
        ],
        toolConfig: { functionCallingConfig: { mode: 'NONE' } },
      },
      memory(),
      false,
    );
    expect((chat.tools as Obj[])[0]).toEqual({
      type: 'function',
      function: {
        name: 'f',
        description: 'F',
        parameters: { type: 'object', properties: { n: { type: 'integer', enum: ['A'] } }, required: ['n'] },
      },
    });
    expect(chat.tool_choice).toBe('none');
  });

  it('refuses what it cannot record, clearly', () => {
    expect(invalidGemini({})).toMatch(/`contents`/);
    expect(invalidGemini({ contents: [{ text: 'x' }] })).toMatch(/`contents\[0\]`: needs `parts`/);
    expect(invalidGemini({ contents: [], generationConfig: { candidateCount: 2 } })).toMatch(/one candidate only/);
    expect(geminiError(429, 'slow down')).toEqual({
      error: { code: 429, message: 'slow down', status: 'RESOURCE_EXHAUSTED' },
    });
  });
});

describe('chat answers as Gemini responses (golden)', () => {
  it('gives thought, text and function-call parts in order, ids kept, usage and the finish reason', () => {
    const answer = geminiResponse({
      id: 'chatcmpl-1',
      created: 0,
      content: 'Reading both.',
      reasoning: 'Two files.',
      toolCalls: [
        { id: 'call_1', name: 'read', arguments: '{"path": "a.txt"}' },
        { id: 'call_2', name: 'read', arguments: '{"path": "b.txt"}' },
      ],
      finishReason: 'tool_calls',
      stopSequence: null,
      inputTokens: 12,
      outputTokens: 30,
    });
    expect(answer).toEqual({
      candidates: [
        {
          content: {
            role: 'model',
            parts: [
              { text: 'Two files.', thought: true },
              { text: 'Reading both.' },
              { functionCall: { id: 'call_1', name: 'read', args: { path: 'a.txt' } } },
              { functionCall: { id: 'call_2', name: 'read', args: { path: 'b.txt' } } },
            ],
          },
          finishReason: 'STOP',
          index: 0,
        },
      ],
      usageMetadata: { promptTokenCount: 12, candidatesTokenCount: 30, totalTokenCount: 42 },
      modelVersion: 'alight',
      responseId: 'chatcmpl-1',
    });
    const cut = geminiResponse({
      id: 'x',
      created: 0,
      content: 'abc',
      reasoning: null,
      toolCalls: [],
      finishReason: 'length',
      stopSequence: null,
      inputTokens: 1,
      outputTokens: 2,
    });
    expect((cut.candidates as Obj[])[0].finishReason).toBe('MAX_TOKENS');
  });
});
