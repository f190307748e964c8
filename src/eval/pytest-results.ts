import { lstatSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StatusMap } from './log-parsers.js';

/**
 * pytest's own results file (JUnit XML), asked of whatever runs pytest through PYTEST_ADDOPTS and written outside the
 * workspace. Its outcomes come from pytest's reports, not from the output the code under test shares, so a PASSED line
 * printed by that code — or a whole forged summary before an early exit — has no match in it. (Code that rewrites
 * this file as well, from inside pytest's process, is beyond any grader that runs it in that process: see the README.)
 */
export const resultsEnv = (dir: string): string => `export PYTEST_ADDOPTS="--junitxml=${dir}/junit.xml"\n`;

const maxBytes = 64 << 20;

/** The results file's text; null when pytest wrote none; an error when it is not a plain file of a sane size. */
export function readResults(dir: string): string | null | { error: string } {
  const file = join(dir, 'junit.xml');
  let size: number;
  try {
    const st = lstatSync(file);
    if (!st.isFile()) return { error: "pytest's results file is not a plain file: the results are not trusted" };
    size = st.size;
  } catch {
    return null;
  }
  return size > maxBytes
    ? { error: "pytest's results file is over 64 MiB: the results are not trusted" }
    : readFileSync(file, 'utf8');
}

type Outcome = 'passed' | 'failed' | 'error' | 'skipped' | 'xfailed';

const xmlText = (s: string): string =>
  s.replace(/&(lt|gt|quot|apos|#(\d+)|#x([0-9a-f]+));|&amp;/gi, (_all, name: string, dec?: string, hex?: string) =>
    dec
      ? String.fromCodePoint(Number(dec))
      : hex
        ? String.fromCodePoint(parseInt(hex, 16))
        : (({ lt: '<', gt: '>', quot: '"', apos: "'" } as Record<string, string>)[name] ?? '&'),
  );

/** Each test case's outcome, keyed as junitKey() keys a node id. */
export function junitOutcomes(xml: string): Map<string, Outcome> {
  const out = new Map<string, Outcome>();
  for (const m of xml.matchAll(/<testcase\b([^>]*?)(?:\/>|>([\s\S]*?)<\/testcase>)/g)) {
    const attr = (name: string): string => xmlText(new RegExp(`\\b${name}="([^"]*)"`).exec(m[1])?.[1] ?? '');
    const body = m[2] ?? '';
    const outcome: Outcome = /<error\b/.test(body)
      ? 'error'
      : /<failure\b/.test(body)
        ? 'failed'
        : /<skipped\b[^>]*type="pytest\.xfail"/.test(body)
          ? 'xfailed'
          : /<skipped\b/.test(body)
            ? 'skipped'
            : 'passed';
    const classname = attr('classname');
    out.set(classname ? `${classname}.${attr('name')}` : attr('name'), outcome);
  }
  return out;
}

/** A node id (`tests/test_x.py::Class::test[p]`) as pytest's JUnit writer names it (`tests.test_x.Class.test[p]`). */
export function junitKey(nodeid: string): string {
  const at = nodeid.indexOf('[');
  const [path, params] = at < 0 ? [nodeid, ''] : [nodeid.slice(0, at), nodeid.slice(at)];
  const names = path.split('::');
  names[0] = names[0].replaceAll('/', '.').replace(/\.py$/, '');
  return names.join('.') + params;
}

/**
 * The log's passing tests that pytest's results file does not show passing. The log names tests relative to where
 * pytest ran, the file relative to the rootdir, so a suffix matches; SWE-bench's parser cuts a parameter at its first
 * space, so a name with an open bracket matches the cases it begins.
 */
export function unbackedPasses(log: StatusMap, xml: string): string[] {
  const outcomes = [...junitOutcomes(xml)];
  const exact = new Map(outcomes);
  const matches =
    (key: string, cut: boolean) =>
    ([k]: [string, Outcome]): boolean =>
      cut ? k.startsWith(key) || k.includes(`.${key}`) : k.endsWith(`.${key}`) || key.endsWith(`.${k}`);
  const backed = (name: string): boolean => {
    const key = junitKey(name);
    const cut = (name.match(/\[/g)?.length ?? 0) > (name.match(/\]/g)?.length ?? 0);
    const found = exact.has(key) ? [exact.get(key)!] : outcomes.filter(matches(key, cut)).map(([, o]) => o);
    return found.some((o) => o === 'passed' || o === 'xfailed');
  };
  return [...log]
    .filter(([name, status]) => (status === 'PASSED' || status === 'XFAIL') && !backed(name))
    .map(([name]) => name);
}
