import { describe, expect, it } from 'vitest';
import { openaiChat } from '../../src/gateway/protocols/openai-chat.js';
import { openaiCompletions } from '../../src/gateway/protocols/openai-completions.js';
import {
  cutMembers,
  type PromptIdsHint,
  readAnswer,
  type ScannedAnswer,
  tokenFieldsOf,
} from '../../src/gateway/protocols/token-fields.js';
import type { Protocol } from '../../src/gateway/protocols/types.js';
import { SseSplitter } from '../../src/gateway/sse.js';

// The byte-level scanner against JSON.parse: for every answer shape vLLM sends (whole and streamed, chat and
// completions), written every way JSON allows, the token values and the parsed rest must equal what parsing the whole
// text gives, and text cut at byte level must parse to the object the fields were deleted from.
type Obj = Record<string, unknown>;
const ids = (n: number, from = 0) => Array.from({ length: n }, (_, i) => from + ((i * 7919) % 151_000));
const entry = (t: string, logprob: number) => ({
  token: t,
  logprob,
  bytes: [...Buffer.from(t)],
  top_logprobs: [{ token: t, logprob, bytes: [...Buffer.from(t)] }],
});
// A content that holds the field names, quotes, escapes, brackets and non-ASCII text.
const tricky = 'say "prompt_token_ids":[1,2], \\"token_ids\\": {"logprobs": null} ] } é 😀 \u2028 \\u005f';

const chatWhole: Obj = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1_700_000_000,
  model: 'Qwen/Qwen3-0.6B',
  choices: [
    {
      index: 0,
      message: { role: 'assistant', content: tricky, reasoning_content: null, tool_calls: [] },
      logprobs: { content: [entry('say', -0.25), entry(' "', -1.5e-7), entry('é', -12.0625)] },
      finish_reason: 'stop',
      stop_reason: null,
      token_ids: [9, 10, 11],
    },
  ],
  service_tier: null,
  system_fingerprint: null,
  usage: { prompt_tokens: 3000, total_tokens: 3003, completion_tokens: 3, prompt_tokens_details: null },
  prompt_logprobs: null,
  prompt_token_ids: ids(3000),
  kv_transfer_params: null,
};
const completionsWhole: Obj = {
  id: 'cmpl-1',
  object: 'text_completion',
  created: 1,
  model: 'm',
  choices: [
    {
      index: 0,
      text: tricky,
      logprobs: { text_offset: [0, 1], token_logprobs: [null, -0.5, -0.125], tokens: ['a', 'b'], top_logprobs: [] },
      finish_reason: 'length',
      stop_reason: null,
      prompt_logprobs: null,
      prompt_token_ids: ids(2500),
      token_ids: [5, 6],
    },
  ],
  usage: { prompt_tokens: 2500, total_tokens: 2502, completion_tokens: 2 },
};
const chatChunks: Obj[] = [
  {
    id: 'c',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'm',
    choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }],
    // Enough ids for the event to be scanned (from 2 KB), few enough to split the stream at each of its bytes.
    prompt_token_ids: ids(450),
  },
  {
    id: 'c',
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta: { content: tricky }, logprobs: { content: [entry('x', -0.5)] }, token_ids: [42] }],
  },
  {
    id: 'c',
    choices: [
      {
        index: 0,
        delta: { tool_calls: [{ index: 0, id: 't', type: 'function', function: { name: 'sh', arguments: '{"a":' } }] },
        logprobs: { content: [entry('{', -1), entry('"a', -2)] },
        token_ids: [7, 8],
        finish_reason: 'tool_calls',
      },
    ],
  },
  { id: 'c', choices: [], usage: { prompt_tokens: 2600, completion_tokens: 3 } },
];
// Two choices (n = 2) with index 1 first, fields null or empty, the token fields first, last, side by side.
const oddShapes: Obj[] = [
  {
    choices: [
      { index: 1, token_ids: [1] },
      { index: 0, token_ids: [2], logprobs: { content: [] } },
    ],
  },
  { prompt_token_ids: null, choices: [{ token_ids: null, logprobs: null, message: { content: null } }] },
  { prompt_token_ids: [], choices: [{ token_ids: [], prompt_token_ids: [0] }], model: 'm' },
  { choices: null, prompt_token_ids: [2147483647, 0, 10] },
  { choices: [{ logprobs: { content: [{ logprob: -1e-30 }, { logprob: 0 }, { logprob: -9999.0 }] } }] },
  { choices: [{}], prompt_logprobs: [null, { '5': { logprob: -1, rank: 1 } }], kv: { prompt_token_ids: [1] } },
  { model: 'a', choices: [{ index: 0, delta: {}, token_ids: [3] }], error: null },
];

/** The same object as JSON text every way that parses to it. */
function writings(o: Obj): string[] {
  const compact = JSON.stringify(o);
  return [
    compact,
    JSON.stringify(o, null, 2),
    JSON.stringify(o, null, '\t').replaceAll('\n', '\r\n'),
    ` \n${compact.replaceAll(',"', ' ,\t"').replaceAll('":', '" :  ')}\n `,
    compact.replaceAll(',', ', ').replaceAll('[', '[ ').replaceAll(']', ' ]'),
  ];
}

/** The reference: the text parsed whole. */
function reference(text: string): { body: Obj; tokens: ReturnType<typeof tokenFieldsOf>['tokens'] } {
  return tokenFieldsOf(JSON.parse(text));
}

function expectSame(got: ScannedAnswer, text: string): void {
  const want = reference(text);
  expect(got.body).toEqual(want.body);
  expect(got.tokens.promptIds && Array.from(got.tokens.promptIds)).toEqual(
    want.tokens.promptIds && Array.from(want.tokens.promptIds),
  );
  expect(got.tokens.choices.map(plain)).toEqual(want.tokens.choices.map(plain));
}
const plain = (c: ScannedAnswer['tokens']['choices'][number]) => ({
  ...c,
  tokenIds: c.tokenIds && Array.from(c.tokenIds),
  promptIds: c.promptIds && Array.from(c.promptIds),
});

/** The answer without `drop` at the top and in each choice, its model renamed: what the harness gets, as objects. */
function reshaped(o: Obj, drop: string[], model?: string): Obj {
  const out = Object.fromEntries(Object.entries(o).filter(([k]) => !drop.includes(k)));
  if (model !== undefined && 'model' in out) out.model = model;
  if (Array.isArray(out.choices))
    out.choices = out.choices.map((c: Obj) => Object.fromEntries(Object.entries(c).filter(([k]) => !drop.includes(k))));
  return out;
}

const shapes = [chatWhole, completionsWhole, ...chatChunks, ...oddShapes];

describe('the token-field scanner', () => {
  it('reads every shape, written every way, exactly as JSON.parse does, and scans rather than falls back', () => {
    let scanned = 0;
    for (const shape of shapes)
      for (const text of writings(shape)) {
        const got = readAnswer(Buffer.from(text), 'scan');
        expectSame(got, text);
        if (got.members) scanned++;
      }
    expect(scanned).toBe(shapes.length * 5);
  });

  it('cuts the fields a harness did not ask for out of the bytes, leaving valid JSON equal to deleting them', () => {
    const drops = [
      ['prompt_token_ids', 'token_ids'],
      ['logprobs', 'prompt_logprobs'],
      ['prompt_token_ids', 'token_ids', 'logprobs', 'prompt_logprobs'],
      [],
    ];
    for (const shape of shapes)
      for (const text of writings(shape))
        for (const drop of drops)
          for (const model of [undefined, 'my "model" é']) {
            const read = readAnswer(Buffer.from(text), 'scan');
            const sets = { top: new Set(drop), choice: new Set(drop) };
            const cut = cutMembers(read.bytes!, read.members!, sets, model && JSON.stringify(model));
            expect(JSON.parse(cut.toString())).toEqual(reshaped(JSON.parse(text), drop, model));
          }
  });

  it("reads prompt ids against the rollout's last ones exactly as JSON.parse does, and keeps the hint current", () => {
    const answer = (prompt: string) => `{"choices":[{"token_ids":[7]}],"prompt_token_ids":${prompt}}`;
    const hint: PromptIdsHint = { text: null, ids: null };
    const prompts = [
      '[1,2,3]',
      '[1,2,3]', // identical: the hint's own ids
      '[1,2,3,40,5]', // extends it: only the rest decoded
      '[1,2,34]', // shares bytes but not ids: "3" is not "34"
      '[1,2]', // shorter
      '[1,2 ,9]', // shares the bytes, then whitespace
      '[ 1,2 ]',
      '[]',
      '[]',
      '[0]',
      `[${ids(5000).join(',')}]`,
      `[${[...ids(5000), 1, 2].join(',')}]`,
      `[${[...ids(4999), 1].join(',')}]`,
      'null',
      '[1,2,3]',
    ];
    let last = '';
    for (const prompt of prompts) {
      const known = hint.ids;
      const got = readAnswer(Buffer.from(answer(prompt)), 'scan', hint);
      if (prompt === last) expect(got.tokens.promptIds).toBe(known);
      last = prompt;
      expect(got.members, prompt).not.toBeNull();
      const want = JSON.parse(prompt) as number[] | null;
      expect(got.tokens.promptIds && Array.from(got.tokens.promptIds), prompt).toEqual(want);
      if (want) expect(Array.from(hint.ids!)).toEqual(want);
    }
    // Bytes after a matching prefix that are not ids are refused as without a hint, and the hint stays as it was.
    const before = hint.text;
    expect(() => readAnswer(Buffer.from(answer('[1,2,3,x]')), 'scan', hint)).toThrow();
    expect(hint.text).toBe(before);
    // After an empty array, a comma starts no element: refused, not read as the ids after it.
    readAnswer(Buffer.from(answer('[]')), 'scan', hint);
    expect(() => readAnswer(Buffer.from(answer('[,5]')), 'scan', hint)).toThrow();
  });

  it('falls back to parsing the whole text where the scanner cannot be sure, with the same result', () => {
    const texts = [
      // A member name written with an escape is the same name to JSON.parse.
      '{"prompt\\u005ftoken_ids":[1,2],"choices":[{"token\\u005fids":[3]}]}',
      // Ids written otherwise than the scanner reads them, and one beyond int32 (refused: see the next test).
      '{"prompt_token_ids":[1.0,2e0,-3],"choices":[]}',
      '{"prompt_token_ids":[4294967296],"choices":[]}',
      // A logprob entry without its logprob; an index that is not a number.
      '{"choices":[{"index":"0","token_ids":[1],"logprobs":{"content":[{"token":"x"}]}}]}',
      // Duplicate keys: the last wins, as in JSON.parse.
      '{"prompt_token_ids":[1],"prompt_token_ids":[2],"choices":[{"token_ids":[3],"token_ids":[4]}]}',
    ];
    for (const text of texts) expectSame(readAnswer(Buffer.from(text), 'scan'), text);
    // A stream event written over several `data:` lines (joined by newlines) is parsed whole: cut, it would not be one
    // SSE line again.
    const multiLine = `{"choices":[],\n"prompt_token_ids":${JSON.stringify(ids(500))}}`;
    expect(readAnswer(multiLine, 'scan').members).toBeNull();
    expect(readAnswer(multiLine.replace('\n', ''), 'scan').members).not.toBeNull();
    // A stream event parsed whole keeps its token fields in the body (the assemblers read only the rest).
    const whole = readAnswer(multiLine, 'scan');
    expect(whole.body).toEqual(JSON.parse(multiLine));
    expect(Array.from(whole.tokens.promptIds!)).toEqual(ids(500));
    // Invalid text anywhere is refused, also inside a field that is cut rather than parsed.
    for (const bad of [
      '[1,2]',
      '{"a":1',
      '{"choices":[{"token_ids":[1,]}]}',
      '{"a":1} x',
      '',
      '{"prompt_logprobs":[1,,2],"choices":[]}',
      '{"choices":[{"prompt_logprobs":tru}]}',
    ]) {
      expect(() => readAnswer(Buffer.from(bad), 'scan')).toThrow();
    }
  });

  it('reads a null logprob as missing (NaN), refuses what the store cannot hold, and reads bare NaN', () => {
    const lp = (...v: string[]) => `{"choices":[{"logprobs":{"content":[${v.map((l) => `{"logprob":${l}}`)}]}}]}`;
    const cases: [string, number[] | RegExp][] = [
      [lp('null', '-0.5'), [Number.NaN, -0.5]],
      ['{"choices":[{"logprobs":{"content":[{"token":"x"}]}}]}', [Number.NaN]],
      ['{"choices":[{"logprobs":{"token_logprobs":[null,-0.5]}}]}', [Number.NaN, -0.5]],
      [lp('-Infinity', 'NaN', '-3.4e38'), [Number.NEGATIVE_INFINITY, Number.NaN, -3.4e38]],
      [lp('-1e39'), /logprob -1e\+39 is beyond float32/],
      [lp('"-1"'), /logprob "-1" is not a number/],
      ['{"prompt_token_ids":[4294967296],"choices":[]}', /token id 4294967296 is not an int32/],
      ['{"choices":[{"token_ids":[1,-2147483649]}]}', /token id -2147483649 is not an int32/],
      ['{"choices":[{"prompt_token_ids":[2147483648]}]}', /token id 2147483648 is not an int32/],
      ['{"choices":[{"token_ids":[1.5]}]}', /token id 1.5 is not an int32/],
      ['{"choices":[{"token_ids":["5",null]}]}', /token id "5" is not an int32/],
    ];
    for (const [text, want] of cases)
      for (const mode of ['scan', 'parse'] as const) {
        const { tokens, bare } = readAnswer(Buffer.from(text), mode);
        const [choice] = tokens.choices;
        if (want instanceof RegExp) {
          expect(tokens.refused, text).toMatch(want);
          expect([tokens.promptIds, choice?.tokenIds, choice?.promptIds].filter(Boolean), text).toEqual([]);
          continue;
        }
        expect(tokens.refused, text).toBeNull();
        expect(choice.content ?? choice.tokenLogprobs, text).toEqual(want);
        expect(bare, text).toBe(/NaN|Infinity/.test(text));
      }
  });

  it('records a stream split at every byte exactly as parsing each event whole does', () => {
    for (const [protocol, chunks] of [
      [openaiChat, chatChunks],
      [
        openaiCompletions,
        [
          { ...completionsWhole, choices: [{ ...(completionsWhole.choices as Obj[])[0], prompt_token_ids: ids(450) }] },
          { id: 'cmpl-1', choices: [{ index: 0, text: '!', token_ids: [9] }] },
        ],
      ],
    ] as [Protocol, Obj[]][]) {
      const wire = `${chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join('')}data: [DONE]\n\n`;
      const bytes = Buffer.from(wire);
      expect(readAnswer(JSON.stringify(chunks[0]), 'scan').members).not.toBeNull();
      const want = assemble(protocol, [bytes], 'parse');
      expect(want.promptIds).toHaveLength(450);
      for (let at = 1; at < bytes.length; at += 1) {
        const got = assemble(protocol, [bytes.subarray(0, at), bytes.subarray(at)], 'scan');
        expect(got).toEqual(want);
      }
    }
  });
});

/** Feeds a stream's reads through the splitter and the protocol's assembler; the result with plain arrays. */
function assemble(protocol: Protocol, reads: Buffer[], mode: 'scan' | 'parse') {
  const splitter = new SseSplitter();
  const assembler = protocol.assembler();
  for (const r of reads)
    for (const e of splitter.push(r)) if (e.data && e.data !== '[DONE]') assembler.push(readAnswer(e.data, mode));
  const x = assembler.result();
  return {
    ...x,
    promptIds: x.promptIds && Array.from(x.promptIds),
    completionIds: x.completionIds && Array.from(x.completionIds),
  };
}
