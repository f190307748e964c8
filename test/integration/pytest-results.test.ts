import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parsers } from '../../src/eval/log-parsers.js';
import { junitOutcomes, unbackedPasses } from '../../src/eval/pytest-results.js';
import { tempDir } from '../helpers/gateway.js';

// pytest's own results file (JUnit XML) against its -rA log, both written by a real pytest run: every outcome kind,
// classes, parameters with odd characters, a subfolder, and a run started below the rootdir (node ids then differ).
const suite = [
  'import pytest',
  '',
  'def test_pass(): pass',
  '',
  'def test_fail(): assert False',
  '',
  '@pytest.fixture',
  'def broken(): raise RuntimeError("setup")',
  '',
  'def test_error(broken): pass',
  '',
  '@pytest.mark.skip(reason="no")',
  'def test_skip(): pass',
  '',
  '@pytest.mark.xfail',
  'def test_xfail(): assert False',
  '',
  '@pytest.mark.parametrize("v", ["a-b", "x y", "<&\\"q\\">", "a/b.py"])',
  'def test_param(v): pass',
  '',
  'class TestGroup:',
  '    def test_method(self): pass',
  '',
].join('\n');

function run(root: string, cwd: string): { log: string; xml: string } {
  const xml = join(root, 'junit.xml');
  let log: string;
  try {
    log = execFileSync('python3', ['-m', 'pytest', '-rA', '--tb=no', '-p', 'no:cacheprovider', `--junitxml=${xml}`], {
      cwd,
      encoding: 'utf8',
    });
  } catch (err) {
    log = (err as { stdout: string }).stdout; // failures exit 1
  }
  return { log, xml: readFileSync(xml, 'utf8') };
}

describe("pytest's results file", () => {
  const root = tempDir();
  mkdirSync(join(root, 'tests', 'sub'), { recursive: true });
  writeFileSync(join(root, 'pytest.ini'), '[pytest]\n');
  writeFileSync(join(root, 'tests', 'sub', 'test_kinds.py'), suite);

  it.each([
    ['the rootdir', ''],
    ['a folder below it', 'tests'],
  ])('backs every passing result of the log, run from %s', (_, below) => {
    const { log, xml } = run(root, join(root, below));
    const map = parsers.pytest(log);
    expect(map.size).toBe(9); // skips are not listed by name; `x y` is cut at its space
    expect(unbackedPasses(map, xml)).toEqual([]);
    const outcomes = [...junitOutcomes(xml).values()].sort();
    expect(new Set(outcomes)).toEqual(new Set(['passed', 'failed', 'error', 'skipped', 'xfailed']));
  });

  it('finds a PASSED line that pytest did not report: a failing test, an error, an unknown test', () => {
    const { log, xml } = run(root, root);
    const map = parsers.pytest(log);
    const failing = [...map].find(([, s]) => s === 'FAILED')![0];
    const erroring = [...map].find(([, s]) => s === 'ERROR')![0];
    map.set(failing, 'PASSED');
    map.set(erroring, 'PASSED');
    map.set('tests/sub/test_kinds.py::test_forged', 'PASSED');
    expect(unbackedPasses(map, xml).sort()).toEqual([erroring, failing, 'tests/sub/test_kinds.py::test_forged'].sort());
  });
});
