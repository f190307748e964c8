import { describe, expect, it } from 'vitest';
import type { Engine, Sampled } from '../../src/serve/engine.js';
import { type Completion, complete, type Piece } from '../../src/serve/generation.js';

// A stand-in engine over a tiny vocabulary: token i is the i-th string; 0 ends the turn; 9 and 10 are the two
// halves of "é" (so that 9 alone decodes to U+FFFD, as a byte-level tokenizer would).
const vocab = ['<eot>', 'Hel', 'lo', ' wor', 'ld', '\n', '##', '#', 'x', '', 'é'];
function fakeEngine(tokens: number[]): Engine {
  return {
    async *generate(): AsyncGenerator<Sampled> {
      for (const [i, token] of tokens.entries()) yield { token, logprob: -i / 10 };
    },
    isEndOfGeneration: (t: number) => t === 0,
    detokenize: (ids: number[]) => ids.map((t, i) => (t === 9 && ids[i + 1] !== 10 ? '\uFFFD' : vocab[t])).join(''),
  } as unknown as Engine;
}

async function run(tokens: number[], stops: string[] = []): Promise<{ pieces: Piece[]; done: Completion }> {
  const gen = complete(
    fakeEngine(tokens),
    [1],
    { temperature: 1, maxTokens: 100 },
    stops,
    new AbortController().signal,
  );
  const pieces: Piece[] = [];
  let step = await gen.next();
  while (!step.done) {
    pieces.push(step.value);
    step = await gen.next();
  }
  return { pieces, done: step.value };
}

const streamed = (pieces: Piece[], done: Completion): string =>
  pieces.map((p) => p.text).join('') + done.text.slice(pieces.map((p) => p.text).join('').length);

describe('complete', () => {
  it('ends at the end-of-turn token: its id is kept, its text is not', async () => {
    const { pieces, done } = await run([1, 2, 0]);
    expect(done).toMatchObject({ ids: [1, 2, 0], text: 'Hello', finishReason: 'stop' });
    expect(done.logprobs).toHaveLength(3);
    expect(streamed(pieces, done)).toBe('Hello');
  });

  it(
    'stops at a stop string split over tokens, keeping ' + 'its ids but not its text, and never streams part of it',
    async () => {
      const { pieces, done } = await run([1, 2, 7, 6, 8], ['###']);
      expect(done).toMatchObject({ ids: [1, 2, 7, 6], text: 'Hello', finishReason: 'stop' });
      expect(pieces.map((p) => p.text)).toEqual(['Hel', 'lo', '', '']);
    },
  );

  it('holds back an incomplete character until it is whole, and says length when the budget ends', async () => {
    const { pieces, done } = await run([1, 9, 10, 3]);
    expect(pieces.map((p) => p.text)).toEqual(['Hel', '', 'é', ' wor']);
    expect(done).toMatchObject({ text: 'Helé wor', finishReason: 'length' });
  });
});
