import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parsers } from '../../src/eval/grade/log-parsers.js';
import {
  prepareResults,
  type Results,
  readResults,
  resultsEnv,
  tamperedRun,
  unbackedPasses,
} from '../../src/eval/grade/pytest-results.js';
import { tempDir } from '../helpers/gateway.js';

// alight's pytest plugin (python/alight_guard.py) in a real pytest run, as the grader loads it: its signed record
// against the -rA log (every outcome kind, classes, parameters with odd characters, a subfolder, a run started below
// the rootdir), a record rewritten or forged, and what it sees of tampering from the code under test.
const suite = [
  'import pytest',
  'from calc import add',
  '',
  'def test_pass(): assert add(1, 1) == 2',
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
  'def test_own_xfail(): pytest.xfail("the test itself may")',
  '',
  '@pytest.mark.parametrize("v", ["a-b", "x y", "<&\\"q\\">", "a/b.py"])',
  'def test_param(v): pass',
  '',
  'class TestGroup:',
  '    def test_method(self): pass',
  '',
].join('\n');

/** A project with the suite and `calc.py` (plus `extra`), run with the plugin as a grade runs it. */
function run(calcExtra = '', below = '', tests = suite): { log: string; key: string; dir: string } {
  const root = tempDir();
  mkdirSync(join(root, 'tests', 'sub'), { recursive: true });
  writeFileSync(join(root, 'pytest.ini'), '[pytest]\n');
  writeFileSync(join(root, 'calc.py'), `def add(a, b):\n    return a + b\n${calcExtra}`);
  writeFileSync(join(root, 'tests', 'sub', 'test_kinds.py'), tests);
  const dir = mkdtempSync(join(root, '..', 'results-'));
  const key = prepareResults(dir);
  const script = `${resultsEnv(dir)}exec python3 -m pytest -rA --tb=no -p no:cacheprovider`;
  const res = spawnSync('bash', ['-c', script], {
    cwd: join(root, below),
    encoding: 'utf8',
    env: { ...process.env, PYTHONPATH: root, PYTEST_DISABLE_PLUGIN_AUTOLOAD: '1' },
  });
  return { log: `${res.stdout}${res.stderr}`, key, dir };
}

const record = (dir: string, key: string): Results => {
  const read = readResults(dir, key);
  if (!read || 'error' in read) throw new Error(`no record: ${JSON.stringify(read)}`);
  return read;
};

describe("alight's pytest plugin", () => {
  it.each([
    ['the rootdir', ''],
    ['a folder below it', 'tests'],
  ])('backs every passing result of the log, run from %s, and sees nothing wrong', (_, below) => {
    const { log, key, dir } = run('', below);
    const results = record(dir, key);
    const map = parsers.pytest(log);
    expect(map.size).toBe(10); // skips are not listed by name; `x y` is cut at its space
    expect(unbackedPasses(map, results)).toEqual([]);
    expect(results.findings).toEqual([]);
    expect(new Set(results.outcomes.values())).toEqual(new Set(['passed', 'failed', 'error', 'skipped', 'xfailed']));
    // The key was taken before the tests ran.
    expect(existsSync(join(dir, 'key'))).toBe(false);
  });

  it('finds a PASSED line that pytest did not report: a failing test, an error, an unknown test', () => {
    const { log, key, dir } = run();
    const map = parsers.pytest(log);
    const failing = [...map].find(([, s]) => s === 'FAILED')![0];
    const erroring = [...map].find(([, s]) => s === 'ERROR')![0];
    map.set(failing, 'PASSED');
    map.set(erroring, 'PASSED');
    map.set('tests/sub/test_kinds.py::test_forged', 'PASSED');
    const unbacked = unbackedPasses(map, record(dir, key));
    expect(unbacked.sort()).toEqual([erroring, failing, 'tests/sub/test_kinds.py::test_forged'].sort());
  });

  it('refuses a record rewritten after the run, or written without the key', () => {
    const { key, dir } = run();
    const file = join(dir, 'results.json');
    writeFileSync(file, readFileSync(file, 'utf8').replaceAll('"failed"', '"passed"'));
    expect(readResults(dir, key)).toMatchObject({ error: /signature/ });
    writeFileSync(file, `${'0'.repeat(64)}\n{"outcomes": {}, "findings": []}`);
    expect(readResults(dir, key)).toMatchObject({ error: /signature/ });
  });

  // What code under test (calc.py, imported while the tests are collected) does, and what the plugin must see.
  const tampering: [string, string[], RegExp][] = [
    [
      'patches the report class through an aliased sys.modules',
      [
        'import sys as _s',
        '_r = _s.modules["_pytest.reports"]',
        '_i = _r.TestReport.__init__',
        'def _p(self, *a, **k):',
        '    _i(self, *a, **k)',
        '    self.outcome = "passed"',
        '_r.TestReport.__init__ = _p',
      ],
      /TestReport.__init__ was replaced/,
    ],
    [
      'adds a property to the report class found with gc',
      [
        'import gc',
        'for _o in gc.get_objects():',
        '    if isinstance(_o, type) and hasattr(_o, "from_item_and_call"):',
        '        _o.passed = property(lambda self: True)',
      ],
      /TestReport.passed/,
    ],
    [
      "empties the tests' code from a profile hook",
      [
        'import sys',
        'def _h(frame, event, arg):',
        '    if event == "call" and frame.f_code.co_name.endswith("pyfunc_call"):',
        '        fn = list(frame.f_locals.values())[0].obj',
        '        fn.__code__ = (lambda *a, **k: None).__code__',
        'sys.setprofile(_h)',
      ],
      /profile or trace hook/,
    ],
    [
      'raises an xfail through its exception attribute',
      [
        'def add(a, b):',
        '    import importlib',
        '    raise importlib.import_module("py" + "test").xfail.Exception("later")',
      ],
      /xfail was raised from code under test \(calc.py/,
    ],
    [
      'adds a hook implementation',
      [
        'import gc',
        'for _o in gc.get_objects():',
        '    if type(_o).__name__ == "PytestPluginManager":',
        '        class _P:',
        '            def pytest_runtest_logreport(self, report): report.outcome = "passed"',
        '        _o.register(_P())',
      ],
      /implements pytest_runtest_logreport|implementations of pytest_runtest_logreport/,
    ],
  ];

  it.each(tampering)('sees code under test that %s', (_, lines, seen) => {
    const { key, dir } = run(`${lines.join('\n')}\n`);
    const results = record(dir, key);
    expect(results.findings.join('\n')).toMatch(seen);
    expect(tamperedRun(results)).toMatch(/^the test run was tampered with/);
  });

  it('sees a test function whose code changed between collection and its run', () => {
    const lines = [
      'def _empty(*a, **k): pass',
      'def add(a, b):',
      '    import sys',
      '    [m for n, m in sys.modules.items() if n.endswith("test_kinds")][0].test_fail.__code__ = _empty.__code__',
      '    return a + b',
    ];
    const { key, dir } = run(`${lines.join('\n')}\n`);
    const results = record(dir, key);
    expect(results.findings.join('\n')).toMatch(/the code of tests\/sub\/test_kinds.py::test_fail changed/);
  });

  it('refuses a value that lies about equality where a test compares it, in an assert or assertEqual, not an honest one', () => {
    const liars = [
      'class _Anything:',
      '    def __eq__(self, other): return True',
      '    __hash__ = object.__hash__',
      '_AnyInt = type("_AnyInt", (int,), {"__eq__": lambda s, o: isinstance(o, int), "__hash__": int.__hash__})',
      'def lie(a, b): return _Anything()',
      'def pair(a): return (_AnyInt(0), 1)',
      'class Num:',
      '    def __init__(self, v): self.v = v',
      '    def __eq__(self, o): return self.v == (o.v if isinstance(o, Num) else o)',
    ];
    const tests = [
      'import unittest, pytest',
      'from unittest import mock',
      'from calc import add, lie, pair, Num',
      'def test_anything(): assert lie(2, 3) == 5',
      'def test_pair(): assert pair(3) == (3, 1)',
      'def test_honest(): assert Num(3) == 3 and 3 == Num(3) and [Num(1), 2] == [1, 2]',
      'def test_any(): assert lie(1, 1) == mock.ANY and mock.ANY == add(1, 1)',
      'def test_approx(): assert 5.1 == pytest.approx(5, abs=0.2)',
      'class TestCase(unittest.TestCase):',
      '    def test_anything(self): self.assertEqual(5, lie(2, 3))',
      '    def test_honest(self): self.assertEqual(Num(2), 2)',
    ];
    const { key, dir } = run(`${liars.join('\n')}\n`, '', `${tests.join('\n')}\n`);
    const results = record(dir, key);
    const at = (t: string) => results.outcomes.get(`tests/sub/test_kinds.py::${t}`);
    for (const t of ['test_anything', 'test_pair', 'TestCase::test_anything']) expect(at(t), t).toBe('failed');
    for (const t of ['test_honest', 'test_any', 'test_approx', 'TestCase::test_honest'])
      expect(at(t), t).toBe('passed');
    expect(results.findings).toEqual([
      'a value compared in a test lies about equality: calc._Anything equals an object it has never seen',
      'a value compared in a test lies about equality: calc._AnyInt equals both 3 and 7',
    ]);
  });
});
