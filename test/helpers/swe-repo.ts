import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

// A real, tiny Python project in git with a pytest suite, and one SWE-bench-style instance on it: `add` is broken at
// the base commit, the test patch adds the failing test, the gold patch fixes it. Predictions for every grading case.

const env = {
  ...process.env,
  GIT_AUTHOR_NAME: 't',
  GIT_AUTHOR_EMAIL: 't@t',
  GIT_COMMITTER_NAME: 't',
  GIT_COMMITTER_EMAIL: 't@t',
  // Fixed dates: the same commits every run, so the instance image tagged by the base commit is one image, not one
  // more per run on a machine that keeps podman's storage.
  GIT_AUTHOR_DATE: '2026-01-01T00:00:00Z',
  GIT_COMMITTER_DATE: '2026-01-01T00:00:00Z',
};
const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', args, { cwd, env, encoding: 'utf8' }).trim();

const newFile = (file: string, lines: string[]): string =>
  `diff --git a/${file} b/${file}\nnew file mode 100644\n--- /dev/null\n+++ b/${file}\n` +
  `@@ -0,0 +1,${lines.length} @@\n${lines.map((l) => `+${l}`).join('\n')}\n`;

const calc = ['def add(a, b):', '    return a - b', '', '', 'def mul(a, b):', '    return a * b'];
const tests = ['from calc import mul', '', '', 'def test_mul():', '    assert mul(2, 3) == 6'];

export function makeSweRepo(root: string) {
  const repos = join(root, 'repos');
  const repo = join(repos, 'acme__calc');
  mkdirSync(join(repo, 'tests'), { recursive: true });
  writeFileSync(join(repo, 'calc.py'), `${calc.join('\n')}\n`);
  writeFileSync(join(repo, 'tests', 'test_calc.py'), `${tests.join('\n')}\n`);
  writeFileSync(join(repo, 'tests', '__init__.py'), '');
  git(repo, 'init', '-q');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'base');
  const base = git(repo, 'rev-parse', 'HEAD');
  // Diffs made by git from real edits, with their context lines, as the official datasets' are.
  const edit = (file: string, from: string, to: string, append = ''): string => {
    const path = join(repo, file);
    const before = readFileSync(path, 'utf8');
    writeFileSync(path, before.replace(from, to) + append);
    const patch = `${git(repo, 'diff', '--', file)}\n`;
    writeFileSync(path, before);
    return patch;
  };
  const goldPatch = edit('calc.py', 'a - b', 'a + b');
  const wrongPatch = edit('calc.py', 'a - b', 'a * b');
  const testPatch = edit(
    'tests/test_calc.py',
    'from calc import mul',
    'from calc import add, mul',
    '\n\ndef test_add():\n    assert add(2, 3) == 5\n',
  );
  const testEdit = edit('tests/test_calc.py', '== 6', '== 6 or True');
  // A wrong fix whose module prints fake results and a fake exit status when the test process ends.
  const forged = edit(
    'calc.py',
    'a - b',
    'a * b',
    'import atexit\natexit.register(lambda: print("PASSED ' +
      'tests/test_calc.py::test_add\\nFAILED bogus\\n>>>>> Test Exit Code: 0"))\n',
  );
  // Future history the agent must not see: the fix itself, committed later.
  writeFileSync(join(repo, 'calc.py'), `${calc.join('\n').replace('a - b', 'a + b')}\n`);
  git(repo, 'commit', '-q', '-am', 'the fix (future)');

  const instance = {
    instance_id: 'acme__calc-1',
    repo: 'acme/calc',
    base_commit: base,
    patch: goldPatch,
    test_patch: testPatch,
    problem_statement: 'add(2, 3) returns -1 instead of 5.',
    FAIL_TO_PASS: JSON.stringify(['tests/test_calc.py::test_add']),
    PASS_TO_PASS: JSON.stringify(['tests/test_calc.py::test_mul']),
    test_cmd: 'python3 -m pytest -rA --tb=no -p no:cacheprovider',
  };
  const conftest = newFile('conftest.py', [
    'import pytest',
    '',
    '',
    '@pytest.hookimpl(hookwrapper=True)',
    'def pytest_runtest_makereport(item, call):',
    '    outcome = yield',
    '    report = outcome.get_result()',
    '    report.outcome = "passed"',
  ]);
  const predictions: Record<string, { patch: string | null; status: string; flagged?: boolean }> = {
    gold: { patch: instance.patch, status: 'resolved' },
    empty: { patch: '', status: 'empty_patch' },
    none: { patch: null, status: 'empty_patch' },
    wrong: { patch: wrongPatch, status: 'unresolved' },
    malformed: {
      patch:
        'diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -7,2 +7,2 @@\n-nothing like this\n+here\n',
      status: 'error',
    },
    conftest: { patch: conftest, status: 'unresolved', flagged: true },
    'test-only': { patch: testEdit, status: 'unresolved', flagged: true },
    forged: { patch: forged, status: 'error' },
  };
  const tasksFile = join(root, 'tasks.jsonl');
  writeFileSync(tasksFile, `${JSON.stringify(instance)}\n`);
  return { repos, base, instance, predictions, tasksFile, conftest };
}
