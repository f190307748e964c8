import type { LlamaModel, Token } from 'node-llama-cpp';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ManagedServe } from '../../src/serve/managed.js';
import { startServe, testVocab } from '../helpers/model.js';

let serve: ManagedServe;
let openai: OpenAI;
let vocab: LlamaModel;
let model: string;

// llama.cpp on two cores shared with the rest of the suite (or a build beside it) runs many times slower than
// alone: the tests wait for what they need, however long it takes, and bound only a hang.
const patience = 10 * 60_000;

beforeAll(async () => {
  serve = await startServe(['--parallel', '4', '--ctx', '2048']);
  openai = new OpenAI({ baseURL: serve.url, apiKey: 'none', maxRetries: 0, timeout: patience });
  model = (await openai.models.list()).data[0].id;
  // An independent tokenizer: the same file loaded vocabulary-only in this process.
  vocab = await testVocab();
}, patience);
afterAll(async () => serve?.stop());

/** The engine's sequences: in use, and requests waiting for one. */
const health = async (): Promise<{ sequences: number; busy: number; waiting: number }> =>
  (await fetch(`${serve.url.replace(/\/v1$/, '')}/health`)).json();
/** Until no sequence is in use and no request waits: what earlier requests (or a test cut short) left has ended. */
const idle = () => expect.poll(health, { timeout: patience, interval: 250 }).toMatchObject({ busy: 0, waiting: 0 });

type Extra = { prompt_token_ids: number[]; choices: { token_ids: number[] }[] };
const withIds = { return_token_ids: true } as Record<string, unknown>;

describe('alight serve on a real model', { timeout: patience }, () => {
  it(
    'reports token ids that decode to the text, finite ' + 'logprobs ≤ 0, and a next turn that extends the last',
    async () => {
      const messages: OpenAI.ChatCompletionMessageParam[] = [
        { role: 'user', content: 'Write one short sentence about the sea.' },
      ];
      const first = await openai.chat.completions.create({
        model,
        messages,
        max_tokens: 24,
        seed: 7,
        temperature: 0.8,
        logprobs: true,
        ...withIds,
      });
      const f = first as unknown as Extra;
      const ids = f.choices[0].token_ids;
      expect(ids.length).toBeGreaterThan(0);
      const textIds = ids.filter((t) => !vocab.isEogToken(t as Token));
      expect(vocab.detokenize(textIds as Token[])).toBe(first.choices[0].message.content);
      const lps = first.choices[0].logprobs!.content!.map((c) => c.logprob);
      expect(lps).toHaveLength(ids.length);
      for (const lp of lps) {
        expect(Number.isFinite(lp)).toBe(true);
        expect(lp).toBeLessThanOrEqual(0);
      }
      expect(first.usage).toMatchObject({ prompt_tokens: f.prompt_token_ids.length, completion_tokens: ids.length });

      messages.push(
        { role: 'assistant', content: first.choices[0].message.content },
        { role: 'user', content: 'And one more.' },
      );
      const second = (await openai.chat.completions.create({
        model,
        messages,
        max_tokens: 4,
        ...withIds,
      })) as unknown as Extra;
      // Gemma's template is append-only, so the history renders to the very tokens that were sampled.
      expect(second.prompt_token_ids.slice(0, f.prompt_token_ids.length + ids.length)).toEqual([
        ...f.prompt_token_ids,
        ...ids,
      ]);
    },
  );

  it('reproduces ids with a fixed seed, and streaming agrees with a whole answer', async () => {
    const ask = {
      model,
      messages: [{ role: 'user' as const, content: 'Count: one, two,' }],
      max_tokens: 16,
      seed: 1234,
      temperature: 1,
      ...withIds,
    };
    const a = (await openai.chat.completions.create(ask)) as unknown as Extra & OpenAI.ChatCompletion;
    const b = (await openai.chat.completions.create(ask)) as unknown as Extra & OpenAI.ChatCompletion;
    expect(b.choices[0].token_ids).toEqual(a.choices[0].token_ids);
    const stream = await openai.chat.completions.create({ ...ask, stream: true });
    let text = '';
    const ids: number[] = [];
    let prompt: number[] = [];
    let finish: string | null = null;
    for await (const chunk of stream) {
      const c = chunk as unknown as {
        prompt_token_ids?: number[];
        choices: { delta: { content?: string }; token_ids?: number[]; finish_reason: string | null }[];
      };
      if (c.prompt_token_ids) prompt = c.prompt_token_ids;
      text += c.choices[0]?.delta?.content ?? '';
      ids.push(...(c.choices[0]?.token_ids ?? []));
      finish = c.choices[0]?.finish_reason ?? finish;
    }
    expect(prompt).toEqual(a.prompt_token_ids);
    expect(ids).toEqual(a.choices[0].token_ids);
    expect(text).toBe(a.choices[0].message.content);
    expect(finish).toBe(a.choices[0].finish_reason);

    // Without a seed, requests started together still sample independently (one group must not collapse).
    // (An open-ended prompt at temperature 1.5, three answers: a predictable continuation could repeat by chance.)
    const unseeded = {
      ...ask,
      seed: undefined,
      temperature: 1.5,
      messages: [{ role: 'user' as const, content: 'Say any word.' }],
    };
    const answers = (await Promise.all(
      [1, 2, 3].map(() => openai.chat.completions.create(unseeded)),
    )) as unknown as Extra[];
    expect(new Set(answers.map((a) => a.choices[0].token_ids.join(','))).size).toBeGreaterThan(1);
  });

  it("samples a JSON answer to a response_format's schema, each token's id and logprob recorded as ever", async () => {
    const schema = {
      type: 'object',
      properties: {
        scores: {
          type: 'array',
          prefixItems: ['a1', 'b2'].map((id) => ({
            type: 'object',
            properties: {
              id: { const: id },
              explanation: { type: 'string', maxLength: 40 },
              score: { enum: [0, 1, 2] },
            },
            required: ['id', 'explanation', 'score'],
            additionalProperties: false,
          })),
          minItems: 2,
          maxItems: 2,
        },
      },
      required: ['scores'],
      additionalProperties: false,
    };
    const answer = (await openai.chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'Score two answers.' }],
      max_tokens: 200,
      temperature: 1,
      seed: 3,
      response_format: { type: 'json_schema', json_schema: { name: 'scores', schema } },
      ...withIds,
    })) as unknown as OpenAI.ChatCompletion & Extra;
    const text = answer.choices[0].message.content!;
    const parsed = JSON.parse(text) as { scores: { id: string; explanation: string; score: number }[] };
    expect(parsed.scores.map((s) => s.id)).toEqual(['a1', 'b2']);
    expect(parsed.scores.every((s) => [0, 1, 2].includes(s.score) && s.explanation.length <= 40)).toBe(true);
    // The text is the tokens sampled (up to the trailing whitespace the grammar allows and the stop cut).
    expect(vocab.detokenize(answer.choices[0].token_ids as Token[]).startsWith(text.trim())).toBe(true);
    const any = await openai.chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'Describe the sea as JSON.' }],
      max_tokens: 60,
      response_format: { type: 'json_object' },
    });
    expect(any.choices[0].message.content!.trimStart().startsWith('{')).toBe(true);
    await idle();
  });

  it('serves completions from text or token ids, honouring stop strings', async () => {
    const prompt = vocab.tokenize('The days of the week are Monday, Tuesday,') as number[];
    const byIds = await openai.completions.create({
      model,
      prompt: prompt as unknown as string,
      max_tokens: 12,
      temperature: 0,
      ...withIds,
    });
    const byText = await openai.completions.create({
      model,
      prompt: 'The days of the week are Monday, Tuesday,',
      max_tokens: 12,
      temperature: 0,
      stop: [','],
      ...withIds,
    });
    const c = byIds.choices[0] as unknown as { prompt_token_ids: number[]; token_ids: number[]; text: string };
    expect(c.prompt_token_ids).toEqual(prompt);
    // A text prompt gets the beginning-of-sequence token the model expects, as vLLM adds it.
    expect((byText.choices[0] as unknown as { prompt_token_ids: number[] }).prompt_token_ids[0]).toBe(vocab.tokens.bos);
    // Greedy decoding continues the list, so the first comma ends it; the text stops before it, the ids do not.
    expect(byText.choices[0]).toMatchObject({ finish_reason: 'stop' });
    expect(byText.choices[0].text).not.toContain(',');
    const t = byText.choices[0] as unknown as { token_ids: number[] };
    expect(vocab.detokenize(t.token_ids as Token[])).toContain(',');
  });

  it('refuses bad requests clearly and survives 100 concurrent ones', async () => {
    const post = (body: string) =>
      fetch(`${serve.url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const cases: [string, number, RegExp][] = [
      ['{"messages": [', 400, /not valid JSON/],
      [JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], temperature: 5 }), 400, /temperature/],
      [JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], n: 2 }), 400, /one answer per request/],
      [JSON.stringify({ messages: [{ role: 'wizard', content: 'hi' }] }), 400, /role/],
      [
        JSON.stringify({ messages: [{ role: 'user', content: 'word '.repeat(3000) }] }),
        400,
        /maximum context length is 2048 tokens/,
      ],
      [
        JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 5000 }),
        400,
        /maximum context length/,
      ],
      [
        JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], model: 'gpt-9' }),
        404,
        /The model `gpt-9` does not exist; this server serves `gemma-3-270m-q4_k_m`/,
      ],
    ];
    for (const [body, status, message] of cases) {
      const res = await post(body);
      expect(res.status).toBe(status);
      expect((await res.json()).error.message).toMatch(message);
    }
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        openai.chat.completions.create({ model, messages: [{ role: 'user', content: `n${i}` }], max_tokens: 2 }),
      ),
    );
    expect(answers.every((a) => a.choices[0].finish_reason !== null)).toBe(true);
    expect(await health()).toMatchObject({ sequences: 4, busy: 0, waiting: 0 });
  });

  it('gives sequences back when clients hang up, waiting for one or mid-answer', async () => {
    await idle();
    // Whole answers dropped once the first of them is being generated …
    const whole = Array.from({ length: 4 }, () => new AbortController());
    const asked = whole.map((abort, i) =>
      openai.chat.completions
        .create(
          { model, messages: [{ role: 'user', content: `essay ${i}` }], max_tokens: 200 },
          { signal: abort.signal },
        )
        .catch(() => null),
    );
    await expect.poll(health, { timeout: patience, interval: 100 }).toSatisfy((h) => h.busy > 0);
    for (const abort of whole) abort.abort();
    // … and twice as many streams as sequences, dropped at their first chunk (sent before a sequence is free, so
    // most are dropped while waiting for one) or at their fifth (mid-answer).
    await Promise.all(
      Array.from({ length: 8 }, async (_, i) => {
        const abort = new AbortController();
        const stream = await openai.chat.completions.create(
          { model, messages: [{ role: 'user', content: `story ${i}` }], max_tokens: 200, stream: true },
          { signal: abort.signal },
        );
        let chunks = 0;
        for await (const _chunk of stream) if (++chunks === (i % 2 ? 1 : 5)) abort.abort();
      }).map((p) => p.catch(() => {})),
    );
    await Promise.all(asked);
    // A leaked sequence would stay busy for good: every one must come back, however slow the machine.
    await idle();
    const after = await openai.chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'still there?' }],
      max_tokens: 3,
    });
    expect(after.choices[0].finish_reason).toBeTruthy();
  });
});
