/** One server-sent event: its raw text (to relay byte for byte) and its joined `data:` payload. */
export interface SseEvent {
  raw: string;
  data: string | null;
}

/**
 * Splits an SSE byte stream into whole events, however the bytes were chunked on the wire, as the openai SDKs read it
 * (and the spec says): lines end at CRLF, CR or LF, an empty line ends an event, and an event the stream ends before
 * its empty line is not one.
 */
export class SseSplitter {
  private buffer = '';
  /** The bytes of a character the last read cut in two. */
  private cut: Buffer | null = null;
  /** Whether text came yet (a byte-order mark only counts before any). */
  private started = false;

  push(bytes: Uint8Array): SseEvent[] {
    const text = this.buffer + this.decode(bytes);
    const events: SseEvent[] = [];
    // Every known server ends lines with LF or CRLF; CR alone (or mixed ends) take the line by line reading.
    const at = text.indexOf('\r') === -1 ? splitLf(text, events) : splitLines(text, events);
    this.buffer = at === 0 ? text : text.slice(at);
    return events;
  }

  /**
   * The read's whole characters (Buffer's decoder: a streaming TextDecoder costs ~8× as much here), without the
   * byte-order mark a stream may start with, as a TextDecoder drops it.
   */
  private decode(read: Uint8Array): string {
    const b = this.cut ? Buffer.concat([this.cut, read]) : Buffer.from(read.buffer, read.byteOffset, read.length);
    const whole = completeUtf8(b);
    this.cut = whole < b.length ? Buffer.from(b.subarray(whole)) : null;
    const text = b.toString('utf8', 0, whole);
    if (this.started || !text) return text;
    this.started = true;
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  }
}

/** How many bytes of `b` end on a character boundary: a multi-byte character its last bytes start is left out. */
function completeUtf8(b: Buffer): number {
  for (let back = 1; back <= Math.min(3, b.length); back++) {
    const c = b[b.length - back];
    if (c < 0x80) return b.length;
    if (c >= 0xc0) return back < (c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2) ? b.length - back : b.length;
  }
  return b.length;
}

/**
 * The events of a text without CRs into `events`; returns where its unfinished rest starts. Positions in one text, not a
 * re-sliced rest per event, and the next boundary searched once per event.
 */
function splitLf(text: string, events: SseEvent[]): number {
  // An empty line first (the LF of a CRLF whose CR ended the last read) ends an event with no fields.
  let at = text.charCodeAt(0) === 10 ? 1 : 0;
  if (at) events.push({ raw: '\n', data: null });
  for (let end = text.indexOf('\n\n'); end !== -1; end = text.indexOf('\n\n', at)) {
    // The common case, one `data:` line, without splitting.
    const one = text.startsWith('data: ', at) && text.indexOf('\n', at) === end;
    events.push({ raw: text.slice(at, end + 2), data: one ? text.slice(at + 6, end) : dataLines(text.slice(at, end)) });
    at = end + 2;
  }
  return at;
}

/** The events of any text, line by line, into `events`; returns where its unfinished rest starts. */
function splitLines(text: string, events: SseEvent[]): number {
  let at = 0;
  let line = 0;
  /** Where the event's first line ends (-1: none yet), and whether it has more. */
  let first = -1;
  let more = false;
  // The next LF and CR, each searched again only once passed: a text without one is not searched through per line.
  let lf = text.indexOf('\n');
  let cr = text.indexOf('\r');
  for (;;) {
    if (lf !== -1 && lf < line) lf = text.indexOf('\n', line);
    if (cr !== -1 && cr < line) cr = text.indexOf('\r', line);
    const end = lf === -1 || (cr !== -1 && cr < lf) ? cr : lf;
    if (end === -1) return at;
    // A CR that ends the text may be half of a CRLF: the line it ends is read once the next byte is known. An empty
    // line ends the event either way (an LF after it is then an empty line of no event).
    if (end === cr && end + 1 === text.length && end > line) return at;
    const next = end + (end === cr && text.charCodeAt(end + 1) === 10 ? 2 : 1);
    if (end > line) {
      if (first === -1) first = end;
      else more = true;
    } else {
      // The common case, one `data:` line, without splitting.
      const one = first !== -1 && !more && text.startsWith('data: ', at);
      events.push({
        raw: text.slice(at, next),
        data: one ? text.slice(at + 6, first) : dataLines(text.slice(at, line)),
      });
      at = next;
      first = -1;
      more = false;
    }
    line = next;
  }
}

/** The joined `data` fields of an event's lines (`data` without a colon is an empty one), or null if it has none. */
function dataLines(block: string): string | null {
  let data: string | null = null;
  for (const line of block.split(/\r\n|\r|\n/)) {
    if (line !== 'data' && !line.startsWith('data:')) continue;
    const value = line.slice(line[5] === ' ' ? 6 : 5);
    data = data === null ? value : `${data}\n${value}`;
  }
  return data;
}

export function sseData(payload: unknown): string {
  return `data: ${JSON.stringify(payload)}\n\n`;
}
