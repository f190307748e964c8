import type { Engine, Sampling } from './engine.js';

/** One sampled token and the text it made visible (empty while a character or a possible stop string is incomplete). */
export interface Piece {
  token: number;
  logprob: number;
  text: string;
}

export interface Completion {
  ids: number[];
  logprobs: number[];
  text: string;
  finishReason: 'stop' | 'length';
}

/**
 * Samples a completion of `prompt` and yields it piece by piece; returns the whole of it. Token ids include the
 * end-of-turn token and the tokens of a stop string, the text neither (as vLLM does), so streamed and whole answers
 * agree.
 */
export async function* complete(
  engine: Engine,
  prompt: number[],
  sampling: Sampling,
  stops: string[],
  signal: AbortSignal,
): AsyncGenerator<Piece, Completion> {
  const ids: number[] = [];
  const logprobs: number[] = [];
  const textIds: number[] = [];
  let text = '';
  let shown = 0;
  for await (const { token, logprob } of engine.generate(prompt, sampling, signal)) {
    ids.push(token);
    logprobs.push(logprob);
    if (engine.isEndOfGeneration(token)) {
      yield { token, logprob, text: text.slice(shown) };
      return { ids, logprobs, text, finishReason: 'stop' };
    }
    textIds.push(token);
    text = engine.detokenize(textIds);
    const stopAt = findStop(text, stops, shown);
    if (stopAt !== -1) {
      text = text.slice(0, stopAt);
      yield { token, logprob, text: text.slice(shown) };
      return { ids, logprobs, text, finishReason: 'stop' };
    }
    const visible = visibleLength(text, stops);
    yield { token, logprob, text: text.slice(shown, Math.max(shown, visible)) };
    shown = Math.max(shown, visible);
  }
  return { ids, logprobs, text, finishReason: 'length' };
}

function findStop(text: string, stops: string[], from: number): number {
  let at = -1;
  for (const s of stops) {
    const i = text.indexOf(s, Math.max(0, from - s.length));
    if (i !== -1 && (at === -1 || i < at)) at = i;
  }
  return at;
}

/** How much of `text` can be shown: not a trailing incomplete character, nor a tail that may begin a stop string. */
function visibleLength(text: string, stops: string[]): number {
  let end = text.length;
  while (end > 0 && text[end - 1] === '\uFFFD') end--;
  for (const s of stops) {
    for (let k = Math.min(s.length - 1, end); k > 0; k--) {
      if (text.slice(end - k, end) === s.slice(0, k)) {
        end -= k;
        break;
      }
    }
  }
  return end;
}
