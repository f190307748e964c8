import { join } from 'node:path';
import { type GuardResult, protectedReason } from './guards.js';
import { nfkc, type PythonSource, readPythonSource } from './python-source.js';
import { classesIn, codeOnly } from './tamper-classes.js';
import type { JudgeContext } from './tree-judge.js';

export const frameworkAccessReason = 'test-framework-access';

/**
 * Non-test code whose new lines reach for the means of in-process tampering (tamper-classes.ts). What the code under
 * test does at run time is watched by alight's pytest plugin (python/alight_guard.py); together they raise the bar,
 * neither closes it (the threat model in docs/evaluation.md).
 */

/**
 * The indexes of a file's new lines (not in the base's). A line the base has counts as new where the file now has it
 * more often (copying an existing line elsewhere is new code); blank lines do not count.
 */
export function addedLineIndexes(lines: string[], base: string | undefined): number[] {
  const left = new Map<string, number>();
  for (const l of (base ?? '').split('\n')) left.set(l, (left.get(l) ?? 0) + 1);
  return lines.flatMap((l, i) => {
    const n = left.get(l) ?? 0;
    left.set(l, n - 1);
    return n <= 0 && l.trim() !== '' ? [i] : [];
  });
}

const rewrites = 'rewrites its code through its source encoding (the bytes show other code than Python runs)';

/**
 * The tamper classes of a changed file's new lines (python-source.ts: as Python reads them), read as code (strings and
 * comments blanked) and as written. A file whose encoding rewrites its code is new in every line.
 */
export function fileClasses(source: PythonSource | string, base: string | undefined): string[] {
  const { text, rewritten } = typeof source === 'string' ? { text: nfkc(source), rewritten: false } : source;
  const lines = text.split('\n');
  const code = codeOnly(text).split('\n');
  const added = addedLineIndexes(lines, rewritten || base === undefined ? undefined : nfkc(base));
  const found = classesIn(
    added.map((i) => code[i]),
    added.map((i) => lines[i]),
  );
  return rewritten ? [rewrites, ...found] : found;
}

// The test framework's own package, where the repository under test is pytest or pluggy: there, the code under test
// is the judge, and the flags cannot tell a fix from tampering.
const frameworkPackage = /^(.*?)(_pytest|pytest|pluggy)\//;

function inFrameworkSource(path: string, cx: JudgeContext): boolean {
  const m = frameworkPackage.exec(path);
  return (
    m !== null &&
    m.index === 0 &&
    (m[1] === '' || m[1].endsWith('/')) &&
    cx.base(`${m[1]}${m[2]}/__init__.py`) !== undefined
  );
}

/** Of the changed files judgeTree kept, the non-test Python files whose new lines fall in a class: one flag each. */
export function tamperFlags(ws: string, kept: string[], cx: JudgeContext): GuardResult['flags'] {
  return kept
    .filter((p) => p.endsWith('.py') && protectedReason(p) === null && !inFrameworkSource(p, cx))
    .flatMap((file) => {
      const found = fileClasses(readPythonSource(join(ws, file)), cx.base(file));
      return found.length
        ? [{ file, reason: `${frameworkAccessReason}: non-test code ${found.join('; ')}`, removed: false }]
        : [];
    });
}
