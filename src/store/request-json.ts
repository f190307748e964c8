/**
 * A request body with its history (`messages` of chat and Anthropic, `input` items of Responses, or a string
 * completions `prompt`) serialised item by item, once: the same text is sent upstream, compared with earlier calls,
 * and stored as a suffix.
 */
export interface EncodedRequest {
  body: Record<string, unknown>;
  history: History | null;
  /** The whole body as JSON (history last). */
  json: string;
}

export type History = { key: ItemsKey; items: string[] } | { key: 'prompt'; text: string };
export type ItemsKey = 'messages' | 'input';

export const itemsKeyOf = (body: Record<string, unknown>): ItemsKey | null =>
  Array.isArray(body.messages) ? 'messages' : Array.isArray(body.input) ? 'input' : null;

export function encodeRequest(body: Record<string, unknown>): EncodedRequest {
  const key = itemsKeyOf(body);
  if (key) {
    const items = (body[key] as unknown[]).map((m) => JSON.stringify(m));
    return { body, history: { key, items }, json: withItems(body, key, items) };
  }
  const json = JSON.stringify(body);
  return { body, history: typeof body.prompt === 'string' ? { key: 'prompt', text: body.prompt } : null, json };
}

/** The body as JSON with only the history after its first `prefix` items (or characters). */
export function suffixJson(request: EncodedRequest, prefix: number): string {
  const { body, history } = request;
  if (!history || prefix === 0) return request.json;
  if (history.key !== 'prompt') return withItems(body, history.key, history.items.slice(prefix));
  return JSON.stringify({ ...body, prompt: history.text.slice(prefix) });
}

function withItems(body: Record<string, unknown>, key: ItemsKey, items: string[]): string {
  const head = JSON.stringify({ ...body, [key]: undefined });
  return `${head.slice(0, -1)}${head.length > 2 ? ',' : ''}"${key}":[${items.join(',')}]}`;
}
