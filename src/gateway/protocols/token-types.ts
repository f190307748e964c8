type Obj = Record<string, unknown>;

/** One choice's token values. */
export interface ChoiceTokens {
  tokenIds: Int32Array | null;
  promptIds: Int32Array | null;
  /** Chat's `logprobs.content[].logprob`. */
  content: number[] | null;
  /** Completions' `logprobs.token_logprobs` (null entries kept). */
  tokenLogprobs: number[] | null;
}

/** The token values of an answer or stream event. */
export interface TokenFields {
  /** The top-level `prompt_token_ids`. */
  promptIds: Int32Array | null;
  /** Each choice's, in the array's order. */
  choices: ChoiceTokens[];
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
export function logprobsOf(logprobs: Obj | null | undefined): Pick<ChoiceTokens, 'content' | 'tokenLogprobs'> {
  const content = logprobs?.content;
  const tokens = logprobs?.token_logprobs;
  let values: number[] | null = null;
  if (Array.isArray(content)) {
    values = new Array(content.length);
    for (let k = 0; k < content.length; k++) values[k] = (content[k] as Obj | null)?.logprob as number;
  }
  return { content: values, tokenLogprobs: Array.isArray(tokens) ? (tokens as number[]) : null };
}
