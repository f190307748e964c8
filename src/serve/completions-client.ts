/** An OpenAI-compatible engine asked directly, not through the gateway: the served-policy probe, a teacher's scoring. */
export interface EngineAddress {
  url: string;
  model: string | null;
  apiKey?: string;
}

/** One POST to the engine's `/completions`, `body` with vLLM's extensions (token ids, prompt log-probs) as needed. */
export function postCompletions(
  engine: EngineAddress,
  body: Record<string, unknown>,
  timeoutMs: number,
): Promise<Response> {
  return fetch(`${engine.url.replace(/\/$/, '')}/completions`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(engine.apiKey ? { authorization: `Bearer ${engine.apiKey}` } : {}),
    },
    body: JSON.stringify({ model: engine.model, ...body }),
    signal: AbortSignal.timeout(timeoutMs),
  });
}
