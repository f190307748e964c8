import { arrayItemSpans } from '../json-text.js';

/**
 * A request body with its history (`messages` of chat and Anthropic, `input` items of Responses, or a string
 * completions `prompt`) serialised item by item, once (or taken as the harness wrote it): the same text is sent
 * upstream, compared with earlier calls, and stored as a suffix.
 */
export interface EncodedRequest {
  body: Record<string, unknown>;
  history: History | null;
  /** The whole body as JSON (history last), as sent upstream: bytes where the history was copied from the harness's. */
  payload: string | Buffer;
}

export type History = { key: ItemsKey; items: string[] } | { key: 'prompt'; text: string };
export type ItemsKey = 'messages' | 'input';

export const itemsKeyOf = (body: Record<string, unknown>): ItemsKey | null =>
  Array.isArray(body.messages) ? 'messages' : Array.isArray(body.input) ? 'input' : null;

/** A parsed history array and where its items lie in the text it was parsed from (json-text.ts). */
export interface ItemsSource {
  items: unknown[];
  text: string;
  spans: number[];
  /** The text's bytes when they are ASCII (the spans are byte offsets too), so the history is sent without encoding. */
  ascii: Buffer | null;
}

/** `source`: where the body's history array was parsed from, if it is that array: its items are the text's slices. */
export function encodeRequest(body: Record<string, unknown>, source?: ItemsSource): EncodedRequest {
  const key = itemsKeyOf(body);
  if (key) {
    if (!source || body[key] !== source.items) {
      const items = (body[key] as unknown[]).map((m) => JSON.stringify(m));
      return { body, history: { key, items }, payload: withItems(body, key, items) };
    }
    const { text, spans, ascii } = source;
    const items = source.items.map((_, k) => text.slice(spans[2 * k], spans[2 * k + 1]));
    const payload =
      ascii && spans.length > 0
        ? Buffer.concat([
            Buffer.from(withItems(body, key, []).slice(0, -2)),
            ascii.subarray(spans[0], spans.at(-1)),
            close,
          ])
        : withItems(body, key, items);
    return { body, history: { key, items }, payload };
  }
  const payload = JSON.stringify(body);
  return { body, history: typeof body.prompt === 'string' ? { key: 'prompt', text: body.prompt } : null, payload };
}

const close = Buffer.from(']}');

/** The body as JSON with only the history after its first `prefix` items (or characters). */
export function suffixJson(request: EncodedRequest, prefix: number): string {
  const { body, history } = request;
  if (!history || prefix === 0) return request.payload.toString();
  if (history.key !== 'prompt') return withItems(body, history.key, history.items.slice(prefix));
  return JSON.stringify({ ...body, prompt: history.text.slice(prefix) });
}

function withItems(body: Record<string, unknown>, key: ItemsKey, items: string[]): string {
  const head = JSON.stringify({ ...body, [key]: undefined });
  return `${head.slice(0, -1)}${head.length > 2 ? ',' : ''}"${key}":[${items.join(',')}]}`;
}

/**
 * Where the body's history items lie in `text`, the JSON it was parsed from (`bytes` encoded); undefined where that is
 * not plain.
 */
export function itemsSource(body: Record<string, unknown>, text: string, bytes?: Buffer): ItemsSource | undefined {
  const key = itemsKeyOf(body);
  if (!key) return undefined;
  const items = body[key] as unknown[];
  const spans = arrayItemSpans(text, key);
  if (!spans || spans.length !== 2 * items.length) return undefined;
  return { items, text, spans, ascii: bytes?.length === text.length ? bytes : null };
}
