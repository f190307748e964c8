/** One server-sent event: its raw text (to relay byte for byte) and its joined `data:` payload. */
export interface SseEvent {
  raw: string;
  data: string | null;
}

/** Splits an SSE byte stream into whole events, however the bytes were chunked on the wire. */
export class SseSplitter {
  private readonly decoder = new TextDecoder();
  private buffer = '';

  push(bytes: Uint8Array): SseEvent[] {
    this.buffer += this.decoder.decode(bytes, { stream: true });
    const events: SseEvent[] = [];
    for (;;) {
      const end = boundary(this.buffer);
      if (!end) break;
      const raw = this.buffer.slice(0, end.index + end.length);
      this.buffer = this.buffer.slice(end.index + end.length);
      events.push({ raw, data: dataOf(raw.slice(0, end.index)) });
    }
    return events;
  }
}

function boundary(text: string): { index: number; length: number } | null {
  const lf = text.indexOf('\n\n');
  // A CRLF boundary counts only where it starts before the first LF one: searched that far, not through the whole
  // read at each event.
  const crlf = (lf === -1 ? text : text.slice(0, lf + 3)).indexOf('\r\n\r\n');
  if (crlf !== -1 && (lf === -1 || crlf < lf)) return { index: crlf, length: 4 };
  return lf === -1 ? null : { index: lf, length: 2 };
}

function dataOf(block: string): string | null {
  // The common case, one `data:` line, without splitting.
  if (block.startsWith('data: ') && !block.includes('\n')) return block.slice(6);
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
