import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { copyFileSync, lstatSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../package-root.js';
import { type StatusMap, shortenPathOption } from './log-parsers.js';

/**
 * pytest's outcomes as alight's plugin (python/alight_guard.py) saw them, a second channel beside the log. The grade's
 * results folder (outside the workspace) gets the plugin and a fresh key; the test run is told, through the
 * environment, to load the plugin from there. The plugin takes the key (reads the file and removes it) before any code
 * under test is imported, and when pytest is done writes each test's outcome and the tampering it saw, signed with
 * the key. Code under test can reach the folder, but cannot write a record the grader accepts without the key, which
 * by then lives only in the plugin's memory: a record forged, rewritten or left out is refused. (Code that reaches
 * into the plugin's memory is in-process tampering the grader cannot rule out: see the threat model.)
 */
const plugin = join(packageRoot, 'python', 'alight_guard.py');
const recordFile = 'results.json';
const maxBytes = 64 << 20;

/** Puts the plugin and a fresh key in a grade's results folder; returns the key. */
export function prepareResults(dir: string): string {
  const key = randomBytes(32).toString('hex');
  copyFileSync(plugin, join(dir, 'alight_guard.py'));
  writeFileSync(join(dir, 'key'), key, { mode: 0o600 });
  return key;
}

/** The test script's lines that load the plugin from `dir` (the results folder as the test run sees it). */
export const resultsEnv = (dir: string): string =>
  `export ALIGHT_RESULTS='${dir}' PYTHONPATH='${dir}'"\${PYTHONPATH:+:$PYTHONPATH}" PYTEST_ADDOPTS='-p alight_guard'\n`;

export type Outcome = 'passed' | 'failed' | 'error' | 'skipped' | 'xfailed' | 'xpassed';

export interface Results {
  /** Each test's outcome, by its node id as the log names it (relative to where pytest ran). */
  outcomes: Map<string, Outcome>;
  /** The tampering the plugin saw. */
  findings: string[];
}

export type ReadResults = Results | null | { error: string };

const signed = (key: string, payload: string): Buffer => createHmac('sha256', key).update(payload).digest();

/** The plugin's record, checked against the key; null when there is none; an error when it is not to be trusted. */
export function readResults(dir: string, key: string): ReadResults {
  const file = join(dir, recordFile);
  let size: number;
  try {
    const st = lstatSync(file);
    if (!st.isFile()) return { error: "the plugin's results record is not a plain file: the results are not trusted" };
    size = st.size;
  } catch {
    return null;
  }
  if (size > maxBytes) return { error: "the plugin's results record is over 64 MiB: the results are not trusted" };
  const text = readFileSync(file, 'utf8');
  const cut = text.indexOf('\n');
  const mac = Buffer.from(text.slice(0, Math.max(cut, 0)), 'hex');
  const payload = text.slice(cut + 1);
  const expected = signed(key, payload);
  if (cut < 0 || mac.length !== expected.length || !timingSafeEqual(mac, expected))
    return {
      error:
        "the results record does not carry the signature of alight's plugin (written or rewritten by the code " +
        'under test?): the results are not trusted',
    };
  const record = JSON.parse(payload) as { outcomes: Record<string, Outcome>; findings: string[] };
  return { outcomes: new Map(Object.entries(record.outcomes)), findings: record.findings };
}

/** A node id as the parsers may rename it: matplotlib's enum parameters, absolute paths in parameters. */
const canonical = (name: string): string =>
  shortenPathOption(name.replaceAll('MouseButton.LEFT', '1').replaceAll('MouseButton.RIGHT', '3'));

/**
 * The log's passing tests that the plugin did not see pass. The log names tests as the plugin does (relative to where
 * pytest ran) up to the parsers' renaming; SWE-bench's parser cuts a parameter at its first space, so a name with an
 * open bracket matches the cases it begins.
 */
export function unbackedPasses(log: StatusMap, results: Results): string[] {
  const passing = [...results.outcomes].filter(([, o]) => o === 'passed' || o === 'xfailed').map(([n]) => canonical(n));
  const exact = new Set(passing);
  const backed = (name: string): boolean => {
    const cut = (name.match(/\[/g)?.length ?? 0) > (name.match(/\]/g)?.length ?? 0);
    return exact.has(canonical(name)) || (cut && passing.some((n) => n.startsWith(name)));
  };
  return [...log]
    .filter(([name, status]) => (status === 'PASSED' || status === 'XFAIL') && !backed(name))
    .map(([name]) => name);
}

/** Why the run is refused for what the plugin saw, or null. */
export function tamperedRun(results: ReadResults | undefined): string | null {
  if (!results || 'error' in results || !results.findings.length) return null;
  const more = results.findings.length > 3 ? ` and ${results.findings.length - 3} more` : '';
  return `the test run was tampered with: ${results.findings.slice(0, 3).join('; ')}${more}`;
}
