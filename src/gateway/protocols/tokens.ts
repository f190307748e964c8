import type { Extracted } from './types.js';

type Obj = Record<string, unknown>;

export function numbers(value: unknown): number[] | null {
  return Array.isArray(value) ? (value as number[]) : null;
}

export function usageOf(body: Obj): { promptTokens: number | null; completionTokens: number | null } {
  const usage = body.usage as Obj | null | undefined;
  return {
    promptTokens: typeof usage?.prompt_tokens === 'number' ? usage.prompt_tokens : null,
    completionTokens: typeof usage?.completion_tokens === 'number' ? usage.completion_tokens : null,
  };
}

/** Copy of a response without the token-level fields; they are stored as BLOBs. */
export function withoutTokenFields(body: Obj): Obj {
  const { prompt_token_ids: _p, prompt_logprobs: _l, ...rest } = body;
  if (Array.isArray(body.choices)) {
    rest.choices = body.choices.map((c: Obj) => {
      const { token_ids: _t, logprobs: _lp, prompt_token_ids: _cp, prompt_logprobs: _cl, ...choice } = c;
      return choice;
    });
  }
  return rest;
}

/** Accumulates token ids and logprobs across stream chunks of choice 0. */
export class TokenAccumulator {
  promptIds: number[] | null = null;
  completionIds: number[] | null = null;
  logprobs: number[] | null = null;
  finishReason: string | null = null;
  usage: Obj | null = null;

  add(prompt: number[] | null, ids: number[] | null, logprobs: number[] | null): void {
    if (prompt && !this.promptIds) this.promptIds = prompt;
    if (ids) (this.completionIds ??= []).push(...ids);
    if (logprobs) (this.logprobs ??= []).push(...logprobs);
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

/** The parts of a whole (non-stream) answer; `choice` is choice 0. */
export function extractWhole(
  body: Obj,
  choice: Obj | undefined,
  promptIds: number[] | null,
  logprobs: number[] | null,
): Extracted {
  const completionIds = numbers(choice?.token_ids);
  const usage = usageOf(body);
  return {
    response: withoutTokenFields(body),
    promptIds,
    completionIds,
    completionLogprobs: logprobs,
    finishReason: typeof choice?.finish_reason === 'string' ? choice.finish_reason : null,
    promptTokens: usage.promptTokens ?? promptIds?.length ?? null,
    completionTokens: usage.completionTokens ?? completionIds?.length ?? null,
  };
}
