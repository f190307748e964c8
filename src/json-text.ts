// JSON read from its text without parsing it: how deep it nests (refused before anything walks it), where a history's
// items lie (kept as the harness wrote them), where a balanced value ends (a verdict or arguments inside prose).

/**
 * Whatever walks a parsed value recursively (JSON.stringify, validation, copies) overflows the stack on a 100,000-deep
 * array, so input that nests deeper is refused first.
 */
export const maxJsonDepth = 512;

/**
 * Whether JSON text opens more than `limit` arrays and objects at once (everything after parsing walks it recursively).
 */
export function nestedDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      i = stringEnd(text, i);
      if (i < 0) return false; // unterminated: JSON.parse says so
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/** The index of the quote that closes the string opening at `at` (past escaped ones), or -1. */
export function stringEnd(text: string, at: number): number {
  let i = at;
  do i = text.indexOf('"', i + 1);
  while (i > 0 && escaped(text, i));
  return i;
}

/** Whether the quote at `at` is escaped (an odd number of backslashes before it). */
function escaped(text: string, at: number): boolean {
  let n = 0;
  while (text.charCodeAt(at - 1 - n) === 0x5c) n++;
  return n % 2 === 1;
}

/**
 * Where each element of a JSON object's top-level array member `key` lies in its text, as [start, end) pairs, read
 * without parsing: a request's history can then be sent and stored as the harness wrote it instead of re-serialised.
 * Only for text JSON.parse accepted; null where the member is not found plainly (a name written with an escape).
 * With duplicate members the last counts, as in JSON.parse.
 */
export function arrayItemSpans(text: string, key: string): number[] | null {
  let i = skipWs(text, 0);
  if (text.charCodeAt(i) !== 0x7b) return null;
  let spans: number[] | null = null;
  i = skipWs(text, i + 1);
  while (text.charCodeAt(i) === 0x22) {
    const nameEnd = stringEnd(text, i);
    const name = text.slice(i + 1, nameEnd);
    if (name.includes('\\')) return null;
    i = skipWs(text, skipWs(text, nameEnd + 1) + 1); // past the colon
    if (name === key && text.charCodeAt(i) === 0x5b) {
      spans = [];
      i = elements(text, i, spans);
    } else i = valueEnd(text, i);
    i = skipWs(text, i);
    if (text.charCodeAt(i) === 0x2c) i = skipWs(text, i + 1);
  }
  return spans;
}

/** Past the array opening at `at`, each element's span pushed. */
function elements(text: string, at: number, spans: number[]): number {
  let i = skipWs(text, at + 1);
  while (text.charCodeAt(i) !== 0x5d) {
    const end = valueEnd(text, i);
    spans.push(i, end);
    i = skipWs(text, end);
    if (text.charCodeAt(i) === 0x2c) i = skipWs(text, i + 1);
  }
  return i + 1;
}

/** The index just past the value starting at `at`. */
function valueEnd(text: string, at: number): number {
  let i = at;
  let depth = 0;
  for (;;) {
    const c = text.charCodeAt(i);
    if (c === 0x22) i = stringEnd(text, i);
    else if (c === 0x5b || c === 0x7b) depth++;
    else if (c === 0x5d || c === 0x7d) depth--;
    else if (depth === 0 && (c === 0x2c || c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09)) return i;
    if (depth < 0) return i; // the container around a scalar closes
    i++;
    if (depth === 0 && (c === 0x22 || c === 0x5d || c === 0x7d)) return i;
  }
}

function skipWs(text: string, at: number): number {
  let i = at;
  for (let c = text.charCodeAt(i); c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09; c = text.charCodeAt(++i));
  return i;
}

/** The bracketed JSON text starting at `start` (`{` or `[`; strings and escapes respected), or null where it does not close. */
export function balancedJson(text: string, start: number): string | null {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if ((c === '}' || c === ']') && --depth === 0) return text.slice(start, i + 1);
  }
  return null;
}
