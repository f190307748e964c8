/** What the gateway keeps of one upstream answer, whole or assembled from a stream. */
export interface Extracted {
  /** The answer without its token-level fields, which are kept as typed arrays instead. */
  response: Record<string, unknown>;
  promptIds: number[] | null;
  completionIds: number[] | null;
  completionLogprobs: number[] | null;
  finishReason: string | null;
  promptTokens: number | null;
  completionTokens: number | null;
}

export interface StreamAssembler {
  /** Feed one parsed SSE `data:` object. */
  push(chunk: Record<string, unknown>): void;
  result(): Extracted;
  /** A finish_reason was seen: the answer is complete even if the stream then breaks. */
  finished(): boolean;
}

/** One OpenAI-style wire protocol the gateway records; registered in `protocols/index.ts`. */
export interface Protocol {
  name: string;
  /** The path after `/v1/`. */
  path: string;
  /** A reason the body is not a request of this protocol, or null. */
  invalid(body: Record<string, unknown>): string | null;
  /**
   * Ask a vLLM upstream for what training needs, keeping what the harness asked for; throws an HttpError (400) for a
   * request that cannot be recorded exactly.
   */
  requestTokens(body: Record<string, unknown>): void;
  /**
   * Where asking for tokens changes the answer vLLM gives, the rewrite that gives the harness what it asked for: applied
   * to the whole answer or to each stream chunk in order. Null (the usual case): the upstream's bytes are relayed as
   * they are.
   */
  harnessView?(request: Record<string, unknown>): ((answer: Record<string, unknown>) => Record<string, unknown>) | null;
  extract(body: Record<string, unknown>): Extracted;
  assembler(): StreamAssembler;
}
