import { HttpError } from '../http.js';
import { isRecord } from '../records.js';
import type { Endpoint } from './endpoints.js';
import { anthropicToChat, invalidMessages } from './protocols/anthropic-request.js';
import { geminiToChat, invalidGemini } from './protocols/gemini-request.js';
import type { RolloutMemory } from './protocols/index.js';
import { readWhole, type UpstreamClient } from './upstream.js';

type Obj = Record<string, unknown>;

// The usual rule of thumb for English text and code; only used when the upstream cannot count.
const charsPerToken = 4;

/**
 * Anthropic's `count_tokens`: the translated chat prompt counted by the upstream's tokenizer (vLLM's `/tokenize`,
 * with the chat template and tools), or an estimate from its length, flagged as such, when the upstream cannot count.
 * An upstream that serves Messages itself (`native`) counts its own.
 */
export async function countTokens(
  upstream: UpstreamClient,
  endpoint: Endpoint,
  body: Obj,
  memory: RolloutMemory,
  signal: AbortSignal,
  native: boolean,
): Promise<Obj> {
  const invalid = invalidMessages({ ...body, max_tokens: 1 });
  if (invalid) throw new HttpError(400, invalid);
  if (native)
    return JSON.parse(
      (await upstream.post(endpoint, 'messages/count_tokens', JSON.stringify(body), signal, readWhole)).text,
    ) as Obj;
  const counted = await countChat(
    upstream,
    endpoint,
    anthropicToChat({ ...body, max_tokens: undefined }, memory),
    signal,
  );
  return { input_tokens: counted.count, ...(counted.estimate && { alight_estimate: counted.estimate }) };
}

/** Gemini's `countTokens` (its contents, or a whole `generateContentRequest`), counted as Anthropic's are. */
export async function countGeminiTokens(
  upstream: UpstreamClient,
  endpoint: Endpoint,
  body: Obj,
  memory: RolloutMemory,
  signal: AbortSignal,
): Promise<Obj> {
  const request = isRecord(body.generateContentRequest) ? body.generateContentRequest : body;
  const invalid = invalidGemini(request);
  if (invalid) throw new HttpError(400, invalid);
  const counted = await countChat(upstream, endpoint, geminiToChat(request, memory, false), signal);
  return { totalTokens: counted.count, ...(counted.estimate && { alightEstimate: counted.estimate }) };
}

/** A translated chat request's prompt tokens, by the upstream's tokenizer where it has one, else estimated (said). */
async function countChat(
  upstream: UpstreamClient,
  endpoint: Endpoint,
  chat: Obj,
  signal: AbortSignal,
): Promise<{ count: number; estimate?: string }> {
  if (endpoint.model) chat.model = endpoint.model;
  const payload = JSON.stringify({ ...chat, stream: undefined, add_generation_prompt: true });
  if (endpoint.kind === 'vllm') {
    try {
      const answer = await upstream.post(endpoint, '/tokenize', payload, signal, readWhole);
      const count = (JSON.parse(answer.text) as { count?: unknown }).count;
      if (typeof count === 'number') return { count };
    } catch {
      /* estimated below */
    }
  }
  return {
    count: Math.ceil(payload.length / charsPerToken),
    estimate: `the upstream cannot tokenize: ${charsPerToken} characters per token of the translated request`,
  };
}
