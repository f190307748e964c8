import type { ChoiceTokens, ScannedAnswer } from './token-fields.js';
import type { Extracted } from './types.js';

type Obj = Record<string, unknown>;

export function usageOf(body: Obj): { promptTokens: number | null; completionTokens: number | null } {
  const usage = body.usage as Obj | null | undefined;
  return {
    promptTokens: typeof usage?.prompt_tokens === 'number' ? usage.prompt_tokens : null,
    completionTokens: typeof usage?.completion_tokens === 'number' ? usage.completion_tokens : null,
  };
}

/** Accumulates token ids and logprobs across stream chunks of choice 0. */
export class TokenAccumulator {
  promptIds: ArrayLike<number> | null = null;
  completionIds: number[] | null = null;
  logprobs: number[] | null = null;
  finishReason: string | null = null;
  usage: Obj | null = null;

  add(prompt: ArrayLike<number> | null, ids: ArrayLike<number> | null, logprobs: ArrayLike<number> | null): void {
    if (prompt && !this.promptIds) this.promptIds = prompt;
    if (ids) {
      const into = (this.completionIds ??= []);
      for (let k = 0; k < ids.length; k++) into.push(ids[k]);
    }
    if (logprobs) {
      const into = (this.logprobs ??= []);
      for (let k = 0; k < logprobs.length; k++) into.push(logprobs[k]);
    }
  }

  extracted(response: Obj): Extracted {
    const { promptTokens, completionTokens } = usageOf({ usage: this.usage });
    return {
      response,
      promptIds: this.promptIds,
      completionIds: this.completionIds,
      completionLogprobs: this.logprobs,
      finishReason: this.finishReason,
      promptTokens: promptTokens ?? this.promptIds?.length ?? null,
      completionTokens: completionTokens ?? this.completionIds?.length ?? null,
    };
  }
}

/** The parts of a whole (non-stream) answer, read (token-fields.ts); `choice` is choice 0 of its body. */
export function extractWhole(
  a: ScannedAnswer,
  promptIds: ArrayLike<number> | null,
  logprobs: ArrayLike<number> | null,
): Extracted {
  const choice = (a.body.choices as Obj[] | undefined)?.[0];
  const completionIds = a.tokens.choices[0]?.tokenIds ?? null;
  const usage = usageOf(a.body);
  return {
    response: a.body,
    promptIds,
    completionIds,
    completionLogprobs: logprobs,
    finishReason: typeof choice?.finish_reason === 'string' ? choice.finish_reason : null,
    promptTokens: usage.promptTokens ?? promptIds?.length ?? null,
    completionTokens: usage.completionTokens ?? completionIds?.length ?? null,
  };
}

/** Choice 0 of a stream event, as the assemblers take it: the first whose index is 0 (or has none). */
export function streamChoice(a: ScannedAnswer): { choice: Obj | undefined; tokens: ChoiceTokens | undefined } {
  const choices = a.body.choices as Obj[] | undefined;
  const at = choices?.findIndex((c) => (c.index ?? 0) === 0) ?? -1;
  return { choice: at === -1 ? undefined : choices![at], tokens: at === -1 ? undefined : a.tokens.choices[at] };
}

/** What is recorded of an answer whose token values were refused (token-types.ts): none, rather than some as others. */
export function kept(x: Extracted, refused: string | null): Extracted {
  return refused ? { ...x, promptIds: null, completionIds: null, completionLogprobs: null } : x;
}

/** The recorded error of a call whose token values were refused. */
export const refusal = (refused: string | null): string | null =>
  refused &&
  `the upstream sent token values that cannot be recorded as they are (${refused}): ` +
    "the call's token ids and logprobs are left out";
