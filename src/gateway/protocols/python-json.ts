import { randomUUID } from 'node:crypto';

/**
 * JSON as Python's json module writes it by default: NaN, Infinity and -Infinity as bare numbers. A Python engine
 * sends them (a logprob of -inf), a Python client reads them; JSON.parse refuses them. Both functions here are for
 * text that did not parse as JSON, and for values read from such text: plain JSON costs nothing extra.
 */

// Marks a non-finite number as a string while it goes through JSON.parse or JSON.stringify (no number literal is NaN,
// and JSON.stringify writes null for each): a string no answer can hold by chance.
const mark = `\u0000bare-number:${randomUUID()}:`;
const nanMark = `${mark}NaN`;

/** Parses text that JSON.parse refused (`err`); rethrows it for text that is not JSON even with bare numbers. */
export function parseBareNumbers(text: string, err: unknown): unknown {
  const rewritten = rewriteBare(text);
  if (rewritten === null) throw err;
  return JSON.parse(rewritten, (_key, v) => (v === nanMark ? Number.NaN : v));
}

/** The text with its bare NaN and ±Infinity (outside strings) written as JSON; null if it has none. */
function rewriteBare(text: string): string | null {
  let out = '';
  let from = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // an escape: the next character is not a closing quote
      else if (c === 34) inString = false;
      continue;
    }
    if (c === 34) inString = true;
    const word = c === 78 ? 'NaN' : c === 73 ? 'Infinity' : c === 45 ? '-Infinity' : null;
    if (word === null || !text.startsWith(word, i)) continue;
    // Infinity as a literal past the largest double, which JSON.parse reads as Infinity: no mark needed.
    out += text.slice(from, i) + (word === 'NaN' ? JSON.stringify(nanMark) : word === 'Infinity' ? '1e999' : '-1e999');
    from = i + word.length;
    i = from - 1;
  }
  return from === 0 ? null : out + text.slice(from);
}

/** JSON of a value read with bare numbers, writing its non-finite numbers bare again (JSON.stringify writes null). */
export function stringifyBareNumbers(value: unknown): string {
  const marked = JSON.stringify(value, (_key, v) => (typeof v === 'number' && !Number.isFinite(v) ? `${mark}${v}` : v));
  return marked.replace(markedNumber, (_m, n: string) => n);
}

// The marked string as JSON.stringify writes it (its NUL escaped), then the number.
const markedNumber = new RegExp(`"${JSON.stringify(mark).slice(1, -1).replace(/\\/g, '\\\\')}(NaN|-?Infinity)"`, 'g');
