import { HttpError } from '../http.js';
import type { Endpoint } from './endpoints.js';
import { anthropicToChat, invalidMessages } from './protocols/anthropic-request.js';
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
  const chat = anthropicToChat({ ...body, max_tokens: undefined, stream: undefined }, memory);
  if (endpoint.model) chat.model = endpoint.model;
  const payload = JSON.stringify({ ...chat, add_generation_prompt: true });
  if (endpoint.kind === 'vllm') {
    try {
      const answer = await upstream.post(endpoint, '/tokenize', payload, signal, readWhole);
      const count = (JSON.parse(answer.text) as { count?: unknown }).count;
      if (typeof count === 'number') return { input_tokens: count };
    } catch {
      /* estimated below */
    }
  }
  return {
    input_tokens: Math.ceil(payload.length / charsPerToken),
    alight_estimate: `the upstream cannot tokenize: ${charsPerToken} characters per token of the translated request`,
  };
}
