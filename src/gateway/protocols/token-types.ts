type Obj = Record<string, unknown>;

/** One choice's token values. */
export interface ChoiceTokens {
  tokenIds: Int32Array | null;
  promptIds: Int32Array | null;
  /** Chat's `logprobs.content[].logprob`; NaN where one is null or absent (the store's "missing"). */
  content: number[] | null;
  /** Completions' `logprobs.token_logprobs`; NaN where one is null (as the first of an echoed prompt's is). */
  tokenLogprobs: number[] | null;
}

/** The token values of an answer or stream event. */
export interface TokenFields {
  /** The top-level `prompt_token_ids`. */
  promptIds: Int32Array | null;
  /** Each choice's, in the array's order. */
  choices: ChoiceTokens[];
  /**
   * Why a value cannot be stored as it is (an id beyond int32, a logprob beyond float32), or null. Such a value is
   * never stored as another: its array is left null, and the call is recorded as an error.
   */
  refused: string | null;
}

/**
 * A rollout's last prompt ids, as their JSON text (without the closing bracket) and decoded: an agent's next prompt
 * starts with its last one, so a later answer whose ids begin with the same bytes decodes only the rest. A hint only:
 * the bytes are compared, so a prompt that does not extend it is decoded whole.
 */
export interface PromptIdsHint {
  text: Buffer | null;
  ids: Int32Array | null;
}

/** Where one member of the answer's top-level object or of one choice lies in its text. */
export interface FieldMember {
  name: string;
  keyStart: number;
  valueStart: number;
  valueEnd: number;
}

/** A choice's logprob values from its `logprobs` member: chat's per-token entries, completions' list. */
export function logprobsOf(
  logprobs: Obj | null | undefined,
  t: Pick<TokenFields, 'refused'>,
): Pick<ChoiceTokens, 'content' | 'tokenLogprobs'> {
  const content = logprobs?.content;
  const tokens = logprobs?.token_logprobs;
  let values: number[] | null = null;
  if (Array.isArray(content)) {
    values = new Array(content.length);
    for (let k = 0; k < content.length; k++) values[k] = logprobValue((content[k] as Obj | null)?.logprob, t);
  }
  return { content: values, tokenLogprobs: Array.isArray(tokens) ? tokens.map((v) => logprobValue(v, t)) : null };
}

/**
 * A logprob as the store keeps it (float32): null or absent is NaN, missing; a number float32 holds is itself (±∞ and
 * NaN too, as Python engines write them); anything else is refused rather than stored as another value.
 */
function logprobValue(v: unknown, t: Pick<TokenFields, 'refused'>): number {
  if (v === null || v === undefined) return Number.NaN;
  if (typeof v === 'number' && (Number.isFinite(Math.fround(v)) || !Number.isFinite(v))) return v;
  t.refused ??=
    typeof v === 'number' ? `logprob ${v} is beyond float32` : `logprob ${JSON.stringify(v)} is not a number`;
  return Number.NaN;
}

/** Token ids as stored (int32), or null; an array holding anything else is refused rather than wrapped or coerced. */
export function tokenIds(v: unknown, t: Pick<TokenFields, 'refused'>): Int32Array | null {
  if (!Array.isArray(v)) return null;
  // A loop and direct stores, not map or Int32Array.from: a stream reads ~200 small events per answer.
  const ids = new Int32Array(v.length);
  for (let k = 0; k < v.length; k++) {
    const id = v[k];
    if ((id | 0) !== id) {
      t.refused ??= `token id ${typeof id === 'number' ? id : JSON.stringify(id)} is not an int32`;
      return null;
    }
    ids[k] = id;
  }
  return ids;
}
