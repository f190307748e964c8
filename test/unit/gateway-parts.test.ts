import { describe, expect, it } from 'vitest';
import { openaiChat } from '../../src/gateway/protocols/openai-chat.js';
import { openaiCompletions } from '../../src/gateway/protocols/openai-completions.js';
import { readAnswer } from '../../src/gateway/protocols/token-fields.js';
import { SseSplitter } from '../../src/gateway/sse.js';
import { backoffMs, isRetryable, UpstreamStatusError } from '../../src/gateway/upstream.js';
import { nestedDeeperThan } from '../../src/json-text.js';

describe('SSE splitting', () => {
  it('yields whole events however the bytes are cut, multi-byte characters included', () => {
    const text = 'data: {"a":"é"}\n\ndata: [DONE]\r\n\r\n: comment\n\ndata: x\ndata: y\n\n';
    const bytes = new TextEncoder().encode(text);
    for (const size of [1, 2, 3, 7, bytes.length]) {
      const s = new SseSplitter();
      const events = [];
      for (let i = 0; i < bytes.length; i += size) events.push(...s.push(bytes.subarray(i, i + size)));
      expect(reading(events).data).toEqual(['{"a":"é"}', '[DONE]', 'x\ny']);
      expect(events.map((e) => e.raw).join('')).toBe(text);
    }
  });

  it('reads lines ended by CR alone, or every way in one stream, as the openai SDK does', () => {
    const text = 'data: a\r\rdata: b\rdata: c\r\n\r\ndata\n: x\rdata: d\n\r\ndata: [DONE] \r\rdata: e';
    const want = ['a', 'b\nc', '\nd', '[DONE] '];
    const bytes = new TextEncoder().encode(text);
    for (const size of [1, 2, 3, 7, bytes.length]) {
      const s = new SseSplitter();
      const events = [];
      for (let i = 0; i < bytes.length; i += size) events.push(...s.push(bytes.subarray(i, i + size)));
      expect(reading(events).data).toEqual(want);
      // Nothing is lost or made up: what is relayed as it came is the text up to the last event's end.
      expect(events.map((e) => e.raw).join('')).toBe(text.slice(0, text.lastIndexOf('\r') + 1));
    }
  });

  it('splits random streams, lines ended every way, cut anywhere, as a reading of the whole decoded text does', () => {
    // xorshift32: every residue reachable, unlike a float LCG whose low bits die past 2^53.
    let x = 7;
    const rand = (n: number): number => {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      return (x >>> 0) % n;
    };
    const pieces = [
      'data: {"a":1}',
      'data:x',
      'data',
      'data: é',
      'data: の😀',
      'data: \uFEFFx',
      ': note',
      'event: e',
      'data: [DONE]',
      'data: a\r\ndata: b',
      'data: c\rdata: d',
    ];
    const ends = ['\n\n', '\r\n\r\n', '\n', '\r\r', '\r', '\r\n', '\n\r\n', '\r\n\r'];
    for (let round = 0; round < 400; round++) {
      // A byte-order mark now and then, which a TextDecoder drops at the start of the stream (and only there).
      const parts: Buffer[] = rand(5) === 0 ? [Buffer.from([0xef, 0xbb, 0xbf])] : [];
      for (let k = rand(12); k >= 0; k--) {
        parts.push(Buffer.from(pieces[rand(pieces.length)]));
        // Now and then bytes that are not UTF-8: replaced as a TextDecoder reading the whole stream replaces them.
        if (rand(4) === 0)
          parts.push(Buffer.from([[0xc3], [0xe2, 0x82], [0xf0, 0x9f, 0x98], [0x80], [0xed, 0xa0]][rand(5)]));
        parts.push(Buffer.from(ends[rand(ends.length)]));
      }
      const bytes = Buffer.concat(parts);
      const s = new SseSplitter();
      const events = [];
      for (let i = 0; i < bytes.length; ) {
        const size = rand(40); // empty reads too
        events.push(...s.push(bytes.subarray(i, i + size)));
        i += size;
      }
      expect(reading(events)).toEqual(reading(referenceSplit(new TextDecoder().decode(bytes))));
    }
  });
});

/** What a reading gives: the data of its events, and the text they span (relayed as it came). */
const reading = (events: { raw: string; data: string | null }[]) => ({
  data: events.filter((e) => e.data !== null).map((e) => e.data),
  raw: events.map((e) => e.raw).join(''),
});

/** Whole events of a complete text, the plain way the spec reads it: lines end at CRLF, CR or LF. */
function referenceSplit(text: string): { raw: string; data: string | null }[] {
  const events = [];
  const parts = text.split(/(\r\n|\r|\n)/);
  let raw = '';
  let data: string | null = null;
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const line = parts[i];
    raw += line + parts[i + 1];
    if (line === '') {
      events.push({ raw, data });
      raw = '';
      data = null;
    } else if (line === 'data' || line.startsWith('data:')) {
      const value = line.slice(line[5] === ' ' ? 6 : 5);
      data = data === null ? value : `${data}\n${value}`;
    }
  }
  return events;
}

/** An upstream event or answer as the gateway reads it from a vLLM upstream. */
const read = (o: object) => readAnswer(Buffer.from(JSON.stringify(o)), 'scan');

describe('stream assembly', () => {
  it('assembles chat chunks with tool calls, reasoning and token ids into one answer', () => {
    const a = openaiChat.assembler();
    a.push(
      read({
        id: 'c1',
        created: 5,
        model: 'm',
        prompt_token_ids: [1, 2],
        choices: [{ index: 0, delta: { role: 'assistant', content: '' } }],
      }),
    );
    a.push(
      read({
        id: 'c1',
        choices: [
          {
            index: 0,
            delta: { reasoning_content: 'think' },
            token_ids: [3],
            logprobs: { content: [{ logprob: -0.5 }] },
          },
        ],
      }),
    );
    a.push(
      read({
        id: 'c1',
        choices: [
          {
            index: 0,
            delta: {
              tool_calls: [{ index: 0, id: 't1', type: 'function', function: { name: 'bash', arguments: '{"cmd":' } }],
            },
            token_ids: [4, 5],
            logprobs: { content: [{ logprob: -1 }, { logprob: -2 }] },
          },
        ],
      }),
    );
    a.push(
      read({
        id: 'c1',
        choices: [
          {
            index: 0,
            delta: { tool_calls: [{ index: 0, function: { arguments: '"ls"}' } }] },
            token_ids: [6],
            logprobs: { content: [{ logprob: -3 }] },
            finish_reason: 'tool_calls',
          },
        ],
      }),
    );
    expect(a.finished()).toBe(true);
    a.push(read({ id: 'c1', choices: [], usage: { prompt_tokens: 2, completion_tokens: 4 } }));
    const r = a.result();
    expect(Array.from(r.promptIds!)).toEqual([1, 2]);
    expect(Array.from(r.completionIds!)).toEqual([3, 4, 5, 6]);
    expect(r.completionLogprobs).toEqual([-0.5, -1, -2, -3]);
    expect(r.finishReason).toBe('tool_calls');
    expect(r.response).toEqual({
      id: 'c1',
      created: 5,
      model: 'm',
      object: 'chat.completion',
      usage: { prompt_tokens: 2, completion_tokens: 4 },
      choices: [
        {
          index: 0,
          finish_reason: 'tool_calls',
          message: {
            role: 'assistant',
            content: '',
            reasoning_content: 'think',
            tool_calls: [{ id: 't1', type: 'function', function: { name: 'bash', arguments: '{"cmd":"ls"}' } }],
          },
        },
      ],
    });
  });

  it('extracts whole answers without keeping their bulky token fields', () => {
    const x = openaiCompletions.extract(
      read({
        id: 'x',
        choices: [
          {
            index: 0,
            text: 'hi',
            finish_reason: 'length',
            prompt_token_ids: [1],
            token_ids: [2, 3],
            logprobs: { token_logprobs: [-1, -2] },
          },
        ],
      }),
    );
    expect(x).toMatchObject({
      promptIds: Int32Array.from([1]),
      completionIds: Int32Array.from([2, 3]),
      completionLogprobs: [-1, -2],
      finishReason: 'length',
      promptTokens: 1,
      completionTokens: 2,
    });
    expect(x.response).toEqual({ id: 'x', choices: [{ index: 0, text: 'hi', finish_reason: 'length' }] });
    const body: Record<string, unknown> = { prompt: 'p', logprobs: 3 };
    const memory = { earlier: () => null, item: () => undefined, toolArguments: () => undefined, dropped: () => {} };
    expect(openaiCompletions.upstream(body, 'vllm', memory)).toEqual({
      path: 'completions',
      body: { prompt: 'p', logprobs: 3, return_token_ids: true },
    });
    expect(body).toEqual({ prompt: 'p', logprobs: 3 });
  });
});

describe('upstream retries', () => {
  it('retries transient failures only, with bounded jittered backoff', () => {
    expect(isRetryable(new UpstreamStatusError(503, '', null))).toBe(true);
    expect(isRetryable(new UpstreamStatusError(429, '', null))).toBe(true);
    expect(isRetryable(new UpstreamStatusError(400, '', null))).toBe(false);
    expect(isRetryable(Object.assign(new Error('x'), { code: 'ECONNREFUSED' }))).toBe(true);
    expect(isRetryable(new Error('x', { cause: Object.assign(new Error('y'), { code: 'UND_ERR_SOCKET' }) }))).toBe(
      true,
    );
    expect(isRetryable(new Error('bad json'))).toBe(false);
    for (let i = 0; i < 50; i++) expect(backoffMs(10, null)).toBeLessThanOrEqual(8000);
    expect(backoffMs(0, 2)).toBe(2000);
    expect(backoffMs(0, 60)).toBe(8000);
  });
});

describe('request nesting', () => {
  it('counts the arrays and objects open at once, not brackets inside strings', () => {
    expect(nestedDeeperThan('{"a":[{"b":[1]}]}', 4)).toBe(false);
    expect(nestedDeeperThan('{"a":[{"b":[1]}]}', 3)).toBe(true);
    expect(nestedDeeperThan(`{"s":"${'['.repeat(1000)}\\"${'{'.repeat(1000)}\\\\","t":[]}`, 2)).toBe(false);
    expect(nestedDeeperThan(`[${'[]'.repeat(10_000)}]`, 2)).toBe(false);
    expect(nestedDeeperThan('{"unterminated": "[[[[', 1)).toBe(false); // JSON.parse refuses it
  });
});
