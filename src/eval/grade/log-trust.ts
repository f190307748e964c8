import { markers } from './grading.js';
import type { ParserName, StatusMap } from './log-parsers.js';
import { type ReadResults, unbackedPasses } from './pytest-results.js';

/**
 * Whether a pytest log ended as pytest ends: its own summary line (`=== 3 passed, 1 failed in 0.12s ===`) and, where
 * it printed the short test summary (`-rA`), results that add up to it. Code under test that prints results and leaves
 * with `os._exit(0)`, or prints extra PASSED lines, fails this; code that forges all of pytest's output consistently
 * has no signed record of alight's plugin to back it (pytest-results.ts; docs/evaluation.md's threat model).
 */
const pytestParsers = new Set<ParserName>(['pytest', 'pytest-options', 'pytest-v2', 'matplotlib', 'seaborn']);

const summaryLine = /^=+ (.+?) in [\d.]+s(?: \([^)]*\))? =+$/gm;
const countWords: Record<string, string> = {
  passed: 'PASSED',
  failed: 'FAILED',
  error: 'ERROR',
  errors: 'ERROR',
  xfailed: 'XFAIL',
  xpassed: 'XPASS',
  skipped: 'SKIPPED',
};

function summaryCounts(text: string): Map<string, number> | null {
  const last = [...text.matchAll(summaryLine)].at(-1);
  if (!last) return null;
  const counts = new Map<string, number>();
  for (const m of last[1].matchAll(/(\d+) (\w+)/g)) {
    const status = countWords[m[2]];
    if (status) counts.set(status, (counts.get(status) ?? 0) + Number(m[1]));
  }
  return counts;
}

/** The short test summary's results by status (`SKIPPED [3] …` counts 3). */
function listedCounts(text: string): Map<string, number> {
  const section = text.split(/^=+ short test summary info =+$/m)[1] ?? '';
  const counts = new Map<string, number>();
  for (const m of section.matchAll(/^(PASSED|FAILED|ERROR|XFAIL|XPASS|SKIPPED) (\[(\d+)\])?/gm)) {
    counts.set(m[1], (counts.get(m[1]) ?? 0) + (m[3] ? Number(m[3]) : 1));
  }
  return counts;
}

/** Why a pytest log is not trusted, or null (and null for other runners' logs). */
export function untrustedPytestLog(log: string, parser: ParserName): string | null {
  if (!pytestParsers.has(parser) || !log.includes(markers.start)) return null;
  const text = log.split(markers.start)[1].split(markers.end)[0];
  const summary = summaryCounts(text);
  if (!summary)
    return (
      "the test run did not end with pytest's summary line (code under test " +
      'that exits early or prints its own results?): the log is not trusted'
    );
  if (!/^=+ short test summary info =+$/m.test(text)) return null;
  const listed = listedCounts(text);
  const statuses = new Set([...summary.keys(), ...listed.keys()]);
  const differ = [...statuses].filter((s) => (summary.get(s) ?? 0) !== (listed.get(s) ?? 0));
  if (!differ.length) return null;
  const show = (c: Map<string, number>): string => differ.map((s) => `${c.get(s) ?? 0} ${s}`).join(', ');
  return (
    `the results listed (${show(listed)}) do not add up to ` +
    `pytest's summary (${show(summary)}): the log is not trusted`
  );
}

/** Why the log's passing results are not backed by the plugin's record (pytest-results.ts), or null. */
export function unbackedResults(map: StatusMap, results: ReadResults | undefined, parser: ParserName): string | null {
  if (!pytestParsers.has(parser) || results === undefined) return null;
  if (results !== null && 'error' in results) return results.error;
  const unbacked =
    results === null
      ? [...map].filter(([, s]) => s === 'PASSED' || s === 'XFAIL').map(([n]) => n)
      : unbackedPasses(map, results);
  if (!unbacked.length) return null;
  const shown = `${unbacked.slice(0, 3).join(', ')}${unbacked.length > 3 ? ` and ${unbacked.length - 3} more` : ''}`;
  return results === null
    ? `the log shows passing tests (${shown}) but pytest wrote no results record ` +
        '(code under test that exits before pytest ends, or a test command that drops PYTEST_ADDOPTS?): the log is not trusted'
    : `the log shows ${shown} passing where pytest's own outcomes ` +
        'do not (output from the code under test?): the log is not trusted';
}
