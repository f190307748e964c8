import type { UpstreamKind } from '../../config/schema.js';
import type { ScannedAnswer } from './token-fields.js';

type Obj = Record<string, unknown>;

/** What the gateway keeps of one upstream answer, whole or assembled from a stream. */
export interface Extracted {
  /** The answer without its token-level fields, which are kept as typed arrays instead. */
  response: Obj;
  promptIds: ArrayLike<number> | null;
  completionIds: ArrayLike<number> | null;
  completionLogprobs: ArrayLike<number> | null;
  finishReason: string | null;
  promptTokens: number | null;
  completionTokens: number | null;
}

export interface StreamAssembler {
  /** Feed one SSE `data:` object, as read (token-fields.ts). */
  push(chunk: ScannedAnswer): void;
  result(): Extracted;
  /** A finish_reason was seen: the answer is complete even if the stream then breaks. */
  finished(): boolean;
}

/**
 * How the harness sees the call: the upstream's answers turned into the answer the harness asked for (its model
 * name, no token fields it did not ask for, or another protocol altogether).
 */
export interface HarnessView {
  /** The harness's body for a whole upstream answer; null: relay the upstream's bytes as they are. */
  whole(answer: ScannedAnswer): Buffer | string | null;
  /** What the harness receives for one upstream stream event, as read (`raw` is its text on the wire). */
  event(raw: string, chunk: ScannedAnswer): string;
  /** What ends a stream the upstream finished (`sawDone`: it sent `[DONE]`). */
  end(sawDone: boolean): string;
  /** The event that ends a stream that broke after bytes reached the harness. */
  broken(message: string): string;
}

/** What a translating protocol may ask about the rollout's earlier calls. */
export interface RolloutMemory {
  /** The harness request and answer of an earlier call whose answer had this id (Responses' previous_response_id). */
  earlier(responseId: string): { request: Obj; response: Obj } | null;
  /** An output item of an earlier answer, by its id (Responses' `item_reference`). */
  item(itemId: string): Obj | undefined;
  /** The exact arguments text of a tool call the upstream made earlier in the rollout, by call id. */
  toolArguments(callId: string): string | undefined;
  /** Records on the rollout what the translation had to leave out (tools the upstream cannot run, unknown items). */
  dropped(kind: string, names: string[]): void;
}

export interface UpstreamRequest {
  /** The path after `/v1/` on the upstream. */
  path: string;
  body: Obj;
}

/** One wire protocol the gateway serves to harnesses; registered in `protocols/index.ts`. */
export interface Protocol {
  name: string;
  /** The path after `/v1/` (the upstream's, where the protocol is relayed unchanged). */
  path: string;
  /**
   * Where harnesses POST it, after `/r/{token}/` (patterns of src/http.ts's Router): with `v1/` and, for clients that
   * take the base URL as the API root (the AI SDK's Anthropic provider), without.
   */
  routes: readonly string[];
  /** A reason the body is not a request of this protocol, or null. */
  invalid(body: Obj): string | null;
  /**
   * The request sent upstream: against vLLM it asks for what training needs (token ids, logprobs), keeping what the
   * harness asked for; throws an HttpError (400) for a request that cannot be recorded exactly. Never changes `body`.
   */
  upstream(body: Obj, kind: UpstreamKind, memory: RolloutMemory): UpstreamRequest;
  /** Whether the upstream's answers carry token fields (token-fields.ts reads them): all but the native protocols. */
  tokenFields: boolean;
  /** The parts of a whole upstream answer, as read. */
  extract(answer: ScannedAnswer): Extracted;
  /** Assembles upstream stream chunks into the whole answer. */
  assembler(): StreamAssembler;
  view(harness: Obj, upstream: Obj, kind: UpstreamKind): HarnessView;
  /** An error body in the protocol's own shape. */
  errorBody(status: number, message: string, type: string): Obj;
  /**
   * Set where the upstream speaks chat/completions in the harness's place: the harness's own request and answer
   * (`answer` turns the assembled chat answer into it) are recorded next to the chat ones.
   */
  translated?: { answer(harness: Obj, chat: Obj): Obj };
  /**
   * Set where the answers are chat answers relayed as they are (plain chat/completions): the gateway keeps their tool
   * calls' argument text, which `upstream` puts back for a harness that returns them re-serialised.
   */
  chatAnswers?: true;
  /** The same protocol relayed unchanged to an upstream that serves it (`upstream.nativeProtocols`). */
  native?: Protocol;
}

/** A route with its API version and without: `v1/messages` and `messages`. */
export const apiPaths = (path: string): string[] => [`v1/${path}`, path];
