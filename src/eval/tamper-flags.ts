import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { protectedReason } from './guards.js';
import type { JudgeContext } from './tree-judge.js';

/** New lines of a changed file (not in the base's), for the content checks. */
export function addedLines(ws: string, path: string, cx: JudgeContext): string[] {
  const base = new Set((cx.base(path) ?? '').split('\n'));
  return readFileSync(join(ws, path), 'utf8')
    .split('\n')
    .filter((l) => !base.has(l));
}

/** Non-test code reaching into the test framework: importing it, defining its hooks, reading its state, skipping. */
const frameworkAccess =
  /\b(import\s+(pytest|_pytest|pluggy)\b|from\s+(pytest|_pytest|pluggy)\b|__import__\(\s*['"](pytest|_pytest|pluggy)|def\s+pytest_\w+|PYTEST_CURRENT_TEST|sys\.modules\s*\[\s*['"](pytest|_pytest)|(xfail|importorskip)\s*\()/;

/** Of the changed files judgeTree kept, the non-test Python files whose new lines reach into the test framework. */
export function frameworkAccessFiles(ws: string, kept: string[], cx: JudgeContext): string[] {
  return kept.filter(
    (p) =>
      p.endsWith('.py') && protectedReason(p) === null && addedLines(ws, p, cx).some((l) => frameworkAccess.test(l)),
  );
}
