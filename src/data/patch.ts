import { createHash } from 'node:crypto';

export interface PatchStats {
  /** Files the diff touches, test files excluded from `sourceFiles`. */
  files: string[];
  sourceFiles: string[];
  hunks: number;
  /** Added plus removed lines, and those outside test files. */
  lines: number;
  sourceLines: number;
}

/**
 * Test files as SWE-bench repos lay them out (a tests/ or testing/ folder, test_*.py, *_test(s).py); shared with the
 * eval guards.
 */
export const testFile = /(^|\/)(tests?|testing)\/|(^|\/)test_[^/]*\.py$|_tests?\.py$/;
export const conftestFile = /(^|\/)conftest\.py$/;
// A dataset's stats also count test_* data files (fixtures) as test-side; the eval guards strip only test code.
const isTest = (path: string): boolean =>
  testFile.test(path) || conftestFile.test(path) || /(^|\/)test_[^/]*$/.test(path);

/** Counts of a unified diff: its files, hunks and changed lines, with test files told apart. */
export function patchStats(patch: string): PatchStats {
  const files: string[] = [];
  let hunks = 0;
  let lines = 0;
  let sourceLines = 0;
  let inTest = false;
  for (const line of patch.split('\n')) {
    if (line.startsWith('diff --git ')) {
      const file = /^diff --git a\/(.*?) b\//.exec(line)?.[1] ?? line.slice(11);
      files.push(file);
      inTest = isTest(file);
    } else if (line.startsWith('@@')) {
      hunks++;
    } else if ((line.startsWith('+') && !line.startsWith('+++')) || (line.startsWith('-') && !line.startsWith('---'))) {
      lines++;
      if (!inTest) sourceLines++;
    }
  }
  return { files, sourceFiles: files.filter((f) => !isTest(f)), hunks, lines, sourceLines };
}

/** The same change written twice hashes the same: `index` lines and trailing whitespace do not count. */
export function patchHash(patch: string): string {
  const normal = patch
    .split('\n')
    .filter((l) => !l.startsWith('index '))
    .map((l) => l.trimEnd())
    .join('\n')
    .trim();
  return sha256(normal);
}

/**
 * Problem statements that differ only in case and spacing hash the same (as words(text).join(' '), without the array).
 */
export function statementHash(text: string): string {
  return sha256(text.toLowerCase().replace(/\s+/g, ' ').trim());
}

/** How many words words() would give, counted without building them. */
export function wordCount(text: string): number {
  let n = 0;
  const run = /\S+/g;
  while (run.exec(text)) n++;
  return n;
}

/**
 * The part of a statement near-dedupe and n-gram decontamination compare: its first MiB. A statement is ~1 KB; the rare
 * huge one (a pasted log) would cost ~20× its size in word arrays, and its first MiB tells it apart as well.
 */
export const matchedText = (text: string): string => (text.length > 2 ** 20 ? text.slice(0, 2 ** 20) : text);

export function words(text: string): string[] {
  return text.toLowerCase().split(/\s+/).filter(Boolean);
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
