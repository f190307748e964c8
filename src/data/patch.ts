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

const headerSwaps: [RegExp, (m: RegExpMatchArray) => string][] = [
  [/^diff --git (\S+) (\S+)$/, (m) => `diff --git ${m[2]} ${m[1]}`],
  [/^new file mode (.*)$/, (m) => `deleted file mode ${m[1]}`],
  [/^deleted file mode (.*)$/, (m) => `new file mode ${m[1]}`],
  [/^old mode (.*)$/, (m) => `new mode ${m[1]}`],
  [/^new mode (.*)$/, (m) => `old mode ${m[1]}`],
  [/^index ([0-9a-f]+)\.\.([0-9a-f]+)(.*)$/, (m) => `index ${m[2]}..${m[1]}${m[3]}`],
];

/**
 * A unified diff turned around: what it adds it removes and the other way round (SWE-smith's bug patch becomes its
 * fix). File headers, modes, creations and deletions, renames and copies swap; each hunk's body is read by its
 * header's line counts (so a body line that looks like a header stays a body line), removals written first.
 */
export function reverseDiff(patch: string): string {
  const lines = patch.split('\n');
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const hunk = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$/.exec(line);
    if (hunk) {
      const range = (start: string, n?: string): string => (n === undefined ? start : `${start},${n}`);
      out.push(`@@ -${range(hunk[3], hunk[4])} +${range(hunk[1], hunk[2])} @@${hunk[5]}`);
      i = reverseHunkBody(lines, i + 1, Number(hunk[2] ?? 1), Number(hunk[4] ?? 1), out) - 1;
    } else if (line.startsWith('--- ') && lines[i + 1]?.startsWith('+++ ')) {
      out.push(`--- ${lines[i + 1].slice(4)}`, `+++ ${line.slice(4)}`);
      i++;
    } else if (/^(rename|copy) from /.test(line) && /^(rename|copy) to /.test(lines[i + 1] ?? '')) {
      // The pair stays in git's order, the paths swapped.
      const [kind, from] = line.split(/ from (.*)/);
      out.push(`${kind} from ${lines[i + 1].replace(/^(rename|copy) to /, '')}`, `${kind} to ${from}`);
      i++;
    } else {
      const swap = headerSwaps.find(([re]) => re.test(line));
      out.push(swap ? swap[1](line.match(swap[0])!) : line);
    }
  }
  return out.join('\n');
}

/** One hunk's body from `start`, signs swapped, each run of changes with its removals first; returns where it ended. */
function reverseHunkBody(lines: string[], start: number, oldN: number, newN: number, out: string[]): number {
  let minus: string[] = [];
  let plus: string[] = [];
  const flush = (): void => {
    out.push(...minus, ...plus);
    minus = [];
    plus = [];
  };
  // Where the last body line went: a "\ No newline at end of file" marker belongs right after it.
  let last: string[] = out;
  let i = start;
  for (; i < lines.length && (oldN > 0 || newN > 0 || lines[i].startsWith('\\')); i++) {
    const line = lines[i];
    if (line.startsWith('-')) {
      oldN--;
      plus.push(`+${line.slice(1)}`);
      last = plus;
    } else if (line.startsWith('+')) {
      newN--;
      minus.push(`-${line.slice(1)}`);
      last = minus;
    } else if (line.startsWith('\\')) {
      last.push(line);
    } else {
      flush();
      oldN--;
      newN--;
      out.push(line);
      last = out;
    }
  }
  flush();
  return i;
}
