/**
 * How deep JSON nests, read from its text without parsing it: whatever walks a parsed value recursively
 * (JSON.stringify, validation, copies) overflows the stack on a 100,000-deep array, so such input is refused first.
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
