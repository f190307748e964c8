/**
 * A request body with its history (chat `messages`, or a string completions `prompt`) serialised message by
 * message, once: the same text is sent upstream, compared with earlier calls, and stored as a suffix.
 */
export interface EncodedRequest {
  body: Record<string, unknown>;
  history: History | null;
  /** The whole body as JSON (history last). */
  json: string;
}

export type History = { key: 'messages'; items: string[] } | { key: 'prompt'; text: string };

export function encodeRequest(body: Record<string, unknown>): EncodedRequest {
  if (Array.isArray(body.messages)) {
    const items = body.messages.map((m) => JSON.stringify(m));
    return { body, history: { key: 'messages', items }, json: withMessages(body, items) };
  }
  const json = JSON.stringify(body);
  return { body, history: typeof body.prompt === 'string' ? { key: 'prompt', text: body.prompt } : null, json };
}

/** The body as JSON with only the history after its first `prefix` items (or characters). */
export function suffixJson(request: EncodedRequest, prefix: number): string {
  const { body, history } = request;
  if (!history || prefix === 0) return request.json;
  if (history.key === 'messages') return withMessages(body, history.items.slice(prefix));
  return JSON.stringify({ ...body, prompt: history.text.slice(prefix) });
}

function withMessages(body: Record<string, unknown>, items: string[]): string {
  const head = JSON.stringify({ ...body, messages: undefined });
  return `${head.slice(0, -1)}${head.length > 2 ? ',' : ''}"messages":[${items.join(',')}]}`;
}
