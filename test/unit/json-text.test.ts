import { describe, expect, it } from 'vitest';
import { arrayItemSpans } from '../../src/json-text.js';
import { encodeRequest, itemsSource } from '../../src/store/request-json.js';

// The spans of a request's history items, read from its text, against JSON.parse: each span parses to its item, for
// every way JSON allows the request to be written.
const messages = [
  { role: 'system', content: 'say "messages":[1,2], \\"x\\" ] } é 😀 \u2028' },
  { role: 'user', content: [{ type: 'text', text: 'a [nested] {one}' }], name: null },
  'a string item',
  42.5e3,
  null,
  true,
  [],
  {},
  [[1, [2]], { a: [] }],
];
const body = { model: 'm', messages, stream: false, tools: [{ type: 'function', function: { name: 'messages' } }] };
const writings = (o: unknown): string[] => [
  JSON.stringify(o),
  JSON.stringify(o, null, 2),
  JSON.stringify(o, null, '\t').replaceAll('\n', '\r\n'),
  // Raw newlines are structural only (strings escape theirs): whitespace before commas and around everything else.
  JSON.stringify(o, null, 1).replaceAll(',\n', ' ,\r\n').replaceAll('\n', ' \n\t'),
];

describe('history item spans', () => {
  it('finds each item of the array member as JSON.parse reads it, written every way', () => {
    for (const text of writings(body)) {
      const spans = arrayItemSpans(text, 'messages')!;
      expect(spans).toHaveLength(2 * messages.length);
      const items = messages.map((_, k) => JSON.parse(text.slice(spans[2 * k], spans[2 * k + 1])));
      expect(items).toEqual(messages);
    }
  });

  it('takes the last of duplicate members, an empty array, and gives up on a name written with an escape', () => {
    expect(arrayItemSpans('{"messages":[1],"messages":[ 2 , 3 ]}', 'messages')).toEqual([29, 30, 33, 34]);
    expect(arrayItemSpans('{"messages":[ ]}', 'messages')).toEqual([]);
    expect(arrayItemSpans('{"input":[1]}', 'messages')).toBeNull();
    expect(arrayItemSpans('{"messag\\u0065s":[1]}', 'messages')).toBeNull();
    expect(arrayItemSpans('{"a":"messages","messages":"[1]"}', 'messages')).toBeNull();
  });

  it('encodes a request from the spans to the same values as from JSON.stringify: bytes where the text is ASCII', () => {
    const asciiBody = JSON.parse(JSON.stringify(body).replaceAll(/[^\x20-\x7e]/g, '?'));
    for (const [shape, bytesOut] of [
      [body, false],
      [asciiBody, true],
    ] as const)
      for (const text of writings(shape)) {
        const parsed = JSON.parse(text);
        const source = itemsSource(parsed, text, Buffer.from(text))!;
        const spanned = encodeRequest({ ...parsed, logprobs: true }, source);
        expect(Buffer.isBuffer(spanned.payload)).toBe(bytesOut);
        expect(JSON.parse(spanned.payload.toString())).toEqual({ ...shape, logprobs: true });
        expect(spanned.history).toMatchObject({ key: 'messages' });
        // A body whose history is another array (a protocol rebuilt it) is serialised, not taken from the text.
        const rebuilt = { ...parsed, messages: [...parsed.messages] };
        const serialised = encodeRequest(rebuilt, source).payload;
        expect(typeof serialised).toBe('string');
        expect(JSON.parse(serialised as string)).toEqual(rebuilt);
      }
  });
});
