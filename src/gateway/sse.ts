/** One server-sent event: its raw text (to relay byte for byte) and its joined `data:` payload. */
export interface SseEvent {
  raw: string;
  data: string | null;
}

/** Splits an SSE byte stream into whole events, however the bytes were chunked on the wire. */
export class SseSplitter {
  private buffer = '';
  /** The bytes of a character the last read cut in two. */
  private cut: Buffer | null = null;
  /** Whether text came yet (a byte-order mark only counts before any). */
  private started = false;

  push(bytes: Uint8Array): SseEvent[] {
    const text = this.buffer + this.decode(bytes);
    const events: SseEvent[] = [];
    // Positions in one text, not a re-sliced rest per event. The next boundary of each kind is searched once per read
    // and again only once passed: a read without one of them is not searched through at every event.
    let at = 0;
    let lf = text.indexOf('\n\n');
    let crlf = text.indexOf('\r\n\r\n');
    for (;;) {
      if (lf !== -1 && lf < at) lf = text.indexOf('\n\n', at);
      if (crlf !== -1 && crlf < at) crlf = text.indexOf('\r\n\r\n', at);
      const isCrlf = crlf !== -1 && (lf === -1 || crlf < lf);
      if (!isCrlf && lf === -1) break;
      const index = isCrlf ? crlf : lf;
      const end = index + (isCrlf ? 4 : 2);
      events.push({ raw: text.slice(at, end), data: dataOf(text, at, index) });
      at = end;
    }
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

/** The data of the event block text[from, to). */
function dataOf(text: string, from: number, to: number): string | null {
  // The common case, one `data:` line, without splitting.
  if (text.startsWith('data: ', from) && text.indexOf('\n', from) >= to) return text.slice(from + 6, to);
  return dataLines(text.slice(from, to));
}

function dataLines(block: string): string | null {
  let data: string | null = null;
  for (const line of block.split(/\r?\n/)) {
    if (!line.startsWith('data:')) continue;
    const value = line.slice(line[5] === ' ' ? 6 : 5);
    data = data === null ? value : `${data}\n${value}`;
  }
  return data;
}

export function sseData(payload: unknown): string {
  return `data: ${JSON.stringify(payload)}\n\n`;
}
