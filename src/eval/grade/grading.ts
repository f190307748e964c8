import type { StatusMap, TestStatus } from './log-parsers.js';

/**
 * The resolved decision of the official SWE-bench harness (`grading.py`, v5), written from its rules:
 * F2P tests must pass (PASSED or XFAIL; missing, FAILED, ERROR and — since v5 — SKIPPED fail); P2P tests must be
 * maintained (passing, or skipped: not a regression). Resolved iff every F2P passes and every P2P is maintained.
 * With `failOnly` (repos whose runner reports failures only) a test fails only when it is shown FAILED.
 */
export interface TestsReport {
  FAIL_TO_PASS: { success: string[]; failure: string[] };
  PASS_TO_PASS: { success: string[]; failure: string[] };
}
export type Resolution = 'RESOLVED_FULL' | 'RESOLVED_PARTIAL' | 'RESOLVED_NO';

const passing: TestStatus[] = ['PASSED', 'XFAIL'];

/**
 * The status-map key for an expected test id; a parametrized id truncated mid-parameter prefix-matches when all matches
 * agree.
 */
function resolveCase(name: string, map: StatusMap): string | null {
  if (map.has(name)) return name;
  if ((name.match(/\[/g)?.length ?? 0) > (name.match(/\]/g)?.length ?? 0)) {
    const matches = [...map.keys()].filter((k) => k.startsWith(name));
    if (matches.length && new Set(matches.map((k) => passing.includes(map.get(k)!))).size === 1) return matches[0];
  }
  return null;
}

const passed = (name: string, map: StatusMap): boolean => {
  const key = resolveCase(name, map);
  return key !== null && passing.includes(map.get(key)!);
};
const maintained = (name: string, map: StatusMap): boolean => {
  const key = resolveCase(name, map);
  return passed(name, map) || (key !== null && map.get(key) === 'SKIPPED');
};
const failed = (name: string, map: StatusMap): boolean => {
  const key = resolveCase(name, map);
  return key === null || ['FAILED', 'ERROR', 'SKIPPED'].includes(map.get(key)!);
};

export function testsReport(
  map: StatusMap,
  f2p: readonly string[],
  p2p: readonly string[],
  failOnly = false,
): TestsReport {
  const report: TestsReport = {
    FAIL_TO_PASS: { success: [], failure: [] },
    PASS_TO_PASS: { success: [], failure: [] },
  };
  const judge = (name: string, into: { success: string[]; failure: string[] }, ok: typeof passed): void => {
    if (failOnly) (map.get(name) === 'FAILED' ? into.failure : into.success).push(name);
    else if (ok(name, map)) into.success.push(name);
    else if (failed(name, map)) into.failure.push(name);
  };
  for (const name of f2p) judge(name, report.FAIL_TO_PASS, passed);
  for (const name of p2p) judge(name, report.PASS_TO_PASS, maintained);
  return report;
}

export function resolution(report: TestsReport): Resolution {
  const rate = (r: { success: string[]; failure: string[] }): number =>
    r.success.length + r.failure.length === 0 ? 1 : r.success.length / (r.success.length + r.failure.length);
  const f2p = rate(report.FAIL_TO_PASS);
  const p2p = rate(report.PASS_TO_PASS);
  if (f2p === 1 && p2p === 1) return 'RESOLVED_FULL';
  if (f2p > 0 && f2p < 1 && p2p === 1) return 'RESOLVED_PARTIAL';
  return 'RESOLVED_NO';
}

export const markers = {
  start: '>>>>> Start Test Output',
  end: '>>>>> End Test Output',
  exitCode: '>>>>> Test Exit Code',
  truncated: '>>>>> Output Truncated',
  timedOut: '>>>>> Tests Timed Out',
  bad: [
    '>>>>> Patch Apply Failed',
    '>>>>> Reset Failed',
    '>>>>> Tests Errored',
    '>>>>> Tests Timed Out',
    '>>>>> Output Truncated',
  ],
};

/**
 * The statuses a test log supports, or why it cannot be graded: a failure marker, missing output markers, no result
 * and no sign the suite ran, or a non-zero exit status while the log claims no failure (a patch printing its own
 * PASSED lines, e.g. from a conftest.py hook).
 */
export function statusesFromLog(
  log: string,
  parse: (log: string) => StatusMap,
): { map: StatusMap } | { invalid: string } {
  const bad = markers.bad.find((m) => log.includes(m));
  if (bad) return { invalid: bad.replace('>>>>> ', '').toLowerCase() };
  if (!log.includes(markers.start) || !log.includes(markers.end))
    return { invalid: 'the test output markers are missing' };
  let map = parse(log.split(markers.start)[1].split(markers.end)[0]);
  if (map.size === 0) map = parse(log);
  if (map.size === 0 && !suiteRan.test(log)) return { invalid: 'no test results and no sign the test suite ran' };
  const exit = new RegExp(`${markers.exitCode}:\\s*(-?\\d+)`).exec(log);
  const code = exit ? Number(exit[1]) : null;
  if (code !== null && code !== 0 && map.size > 0 && ![...map.values()].some((s) => s === 'FAILED' || s === 'ERROR')) {
    return { invalid: `the test command exited ${code} but the log shows no failure: its results are not trusted` };
  }
  return { map };
}

const suiteRan =
  /Executed [1-9]\d* of \d+|TOTAL: [1-9]\d* (?:SUCCESS|FAILED)|[1-9]\d* passing|Tests:\s+[1-9]\d*|Test Suites:\s+(?:\d+ \w+, )*[1-9]\d* total|^# tests [1-9]\d*|[1-9]\d* specs?, \d+ failures?|': ok$/m;
