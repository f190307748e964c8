import { describe, expect, it } from 'vitest';
import { instanceImage } from '../../src/eval/grade/container.js';
import { markers, resolution, statusesFromLog, testsReport } from '../../src/eval/grade/grading.js';
import { fileSections, gitMetadata, guardPatch, unquoteName } from '../../src/eval/grade/guards.js';
import { parserForRepo, parserNamed, parsers } from '../../src/eval/grade/log-parsers.js';
import { evalScript } from '../../src/eval/grade/specs.js';
import { mcnemarExact, signFlipExact } from '../../src/eval/run/compare.js';

// The official harness's parsing and grading rules (SWE-bench v5 grading.py, log_parsers/python.py), case by case.
const entries = (m: Map<string, string>) => Object.fromEntries(m);

describe('SWE-bench log parsers', () => {
  it(
    'reads pytest -rA summaries without skip counts, -v lines ' +
      'only in pytest-v2, and shortens absolute-path parameters',
    () => {
      const log = [
        'PASSED tests/a.py::test_x',
        'FAILED tests/a.py::test_y - AssertionError: 1 != 2',
        'SKIPPED [1] tests/a.py:3: no network',
        'tests/a.py::test_z PASSED',
        'ERROR tests/b.py::test_w',
        'XFAIL tests/b.py::test_v',
      ].join('\n');
      // swebench 5.0.2: the pytest parser reads `STATUS name` lines only; pytest-v2 also `name STATUS`.
      expect(entries(parsers.pytest(log))).toEqual({
        'tests/a.py::test_x': 'PASSED',
        'tests/a.py::test_y': 'FAILED',
        'tests/b.py::test_w': 'ERROR',
        'tests/b.py::test_v': 'XFAIL',
      });
      expect(parsers['pytest-v2'](log).get('tests/a.py::test_z')).toBe('PASSED');
      expect(entries(parsers['pytest-options']('PASSED tests/t.py::test_read[/home/u/data/file.txt]'))).toEqual({
        'tests/t.py::test_read[/file.txt]': 'PASSED',
      });
      expect(entries(parsers['pytest-v2']('\x1b[32mPASSED\x1b[0m tests/x.py::t'))).toEqual({
        'tests/x.py::t': 'PASSED',
      });
      expect(parserForRepo('django/django')).toBe('django');
      expect(parserForRepo('acme/widgets')).toBe('pytest');
    },
  );

  it('reads Django, sympy, matplotlib and seaborn logs', () => {
    expect(
      entries(
        parsers.django(
          [
            'test_a (m.T) ... ok',
            'test_b (m.T) ... FAIL',
            'FAIL: test_c (m.T)',
            "test_d (m.T) ... skipped 'slow'",
            'test_e (m.T) ... ERROR',
            'test_f (m.T) ... some output',
            'ok',
          ].join('\n'),
        ),
      ),
    ).toEqual({
      'test_a (m.T)': 'PASSED',
      'test_b (m.T)': 'FAILED',
      test_c: 'FAILED',
      'test_d (m.T)': 'SKIPPED',
      'test_e (m.T)': 'ERROR',
      'test_f (m.T)': 'PASSED',
    });
    expect(
      entries(
        parsers.sympy(
          ['test_x ok', 'test_y F', 'test_w E', '________ sympy/core/tests/test_a.py:test_z ________'].join('\n'),
        ),
      ),
    ).toEqual({
      'sympy/core/tests/test_a.py:test_z': 'FAILED',
      test_x: 'PASSED',
      test_y: 'FAILED',
      test_w: 'ERROR',
    });
    expect(entries(parsers.matplotlib('PASSED lib/t.py::test_click[MouseButton.LEFT]'))).toEqual({
      'lib/t.py::test_click[1]': 'PASSED',
    });
    expect(entries(parsers.seaborn('tests/t.py::test_a PASSED [ 10%]\nFAILED tests/t.py::test_b'))).toEqual({
      'tests/t.py::test_a': 'PASSED',
      'tests/t.py::test_b': 'FAILED',
    });
  });
});

describe('SWE-bench grading', () => {
  const map = new Map([
    ['f1', 'PASSED'],
    ['f2', 'SKIPPED'],
    ['p1', 'SKIPPED'],
    ['p2', 'FAILED'],
    ['t[a(b', 'PASSED'],
    ['t[a(b)]', 'PASSED'],
  ] as const);

  it('fails a skipped F2P test, keeps a skipped P2P one, and prefix-matches a truncated parametrized id', () => {
    const report = testsReport(new Map(map), ['f1', 'f2', 'missing', 't[a('], ['p1', 'p2']);
    expect(report).toEqual({
      FAIL_TO_PASS: { success: ['f1', 't[a('], failure: ['f2', 'missing'] },
      PASS_TO_PASS: { success: ['p1'], failure: ['p2'] },
    });
    expect(resolution(report)).toBe('RESOLVED_NO');
    expect(resolution(testsReport(new Map(map), ['f1', 'f2'], ['p1']))).toBe('RESOLVED_PARTIAL');
    expect(resolution(testsReport(new Map(map), ['f1'], ['p1']))).toBe('RESOLVED_FULL');
    // fail-only repos
    expect(testsReport(new Map(map), ['missing'], [], true).FAIL_TO_PASS.success).toEqual(['missing']);
  });

  it('refuses a log with a failure marker, without output markers, or whose exit status contradicts it', () => {
    const wrap = (body: string, exit?: number) =>
      `setup\n${markers.start}\n${body}\n${markers.end}\n${exit === undefined ? '' : `${markers.exitCode}: ${exit}\n`}`;
    expect(statusesFromLog(wrap('PASSED a::t'), parsers.pytest)).toEqual({ map: new Map([['a::t', 'PASSED']]) });
    expect(statusesFromLog(`>>>>> Patch Apply Failed\n${wrap('PASSED a::t')}`, parsers.pytest)).toEqual({
      invalid: 'patch apply failed',
    });
    expect(statusesFromLog('PASSED a::t', parsers.pytest)).toEqual({ invalid: 'the test output markers are missing' });
    expect(statusesFromLog(wrap('nothing here'), parsers.pytest)).toEqual({
      invalid: 'no test results and no sign the test suite ran',
    });
    // A conftest.py printing PASSED while pytest itself failed: exit 1 and no FAILED line.
    expect(statusesFromLog(wrap('PASSED a::t', 1), parsers.pytest)).toMatchObject({
      invalid: expect.stringMatching(/exited 1 but the log shows no failure/),
    });
    expect(statusesFromLog(wrap('FAILED a::u', 1), parsers.pytest)).toEqual({ map: new Map([['a::u', 'FAILED']]) });
  });
});

describe('reward-hacking guards', () => {
  const src = 'diff --git a/src/x.py b/src/x.py\n--- a/src/x.py\n+++ b/src/x.py\n@@ -1 +1 @@\n-a\n+b\n';
  it(
    'removes edits to tests and test configuration whatever ' +
      "the diff's form: plain ---/+++ hunks, renames, quoted paths",
    () => {
      const plain = '--- a/tests/test_x.py\n+++ b/tests/test_x.py\n@@ -1 +1 @@\n-assert f()\n+assert True\n';
      const rename =
        'diff --git a/tests/test_y.py b/src/y.py\nsimilarity index 90%\n' +
        'rename from tests/test_y.py\nrename to src/y.py\n';
      const quoted =
        'diff --git "a/pkg/con ftest.py" "b/pkg/conftest.py"\n' +
        '--- "a/pkg/con ftest.py"\n+++ "b/pkg/conftest.py"\n@@ -0,0 +1 @@\n+x\n';
      const guarded = guardPatch(src + plain + rename + quoted, false);
      expect(guarded.patch).toBe(src);
      expect(guarded.flags.map((f) => [f.file, f.reason, f.removed])).toEqual([
        ['tests/test_x.py', 'test file', true],
        ['src/y.py', 'test file', true],
        ['pkg/conftest.py', 'conftest.py (pytest hooks can rewrite outcomes)', true],
      ]);
      expect(guardPatch(plain, true)).toEqual({
        patch: plain,
        flags: [{ file: 'tests/test_x.py', reason: 'test file', removed: false }],
      });
      expect(
        fileSections(src + plain)
          .map((s) => s.text)
          .join(''),
      ).toBe(src + plain); // sections are the patch, cut
    },
  );

  it("removes git's own files in every spelling, even with test edits allowed", () => {
    const made = (name: string): string => `--- /dev/null\n+++ ${name}\n@@ -0,0 +1 @@\n+x\n`;
    const names = [
      'b/.git/config',
      '"b/.g\\151t/config"', // git's C quoting, one letter an octal escape: git and GNU patch read .git/config
      'b/sub/.GIT/hooks/pre-commit',
      'b/.gitattributes',
      'b/.gitmodules',
      'b/.git ', // a gitlink file; GNU patch drops the trailing blank
    ];
    for (const allowTestEdits of [false, true]) {
      const guarded = guardPatch(src + names.map(made).join(''), allowTestEdits);
      expect(guarded.patch).toBe(src);
      expect(guarded.flags.map((f) => [f.reason, f.removed])).toEqual(names.map(() => [gitMetadata, true]));
    }
    expect(guardPatch(made('b/src/.github/x.yml') + made('b/legit.gitx'), false).flags).toEqual([]);
  });

  it('reads C-quoted names as git does: escapes, octal bytes of UTF-8, quotes', () => {
    expect(unquoteName('"b/.g\\151t/config"')).toBe('b/.git/config');
    expect(unquoteName('"a/\\303\\251t\\\\\\"e\\t"')).toBe('a/ét\\"e\t');
    expect(unquoteName('plain name')).toBe('plain name');
  });
});

describe('instance images, eval scripts, parser names', () => {
  it("names SWE-bench's prebuilt images unless the row or a template says otherwise", () => {
    expect(instanceImage({ instance_id: 'django__django-11099' })).toBe(
      'docker.io/swebench/sweb.eval.x86_64.django_1776_django-11099:latest',
    );
    expect(instanceImage({ instance_id: 'a__b-1', image_name: 'swesmith.x86_64.a__b.123' })).toBe(
      'swesmith.x86_64.a__b.123',
    );
    expect(instanceImage({ instance_id: 'a__b-1', repo: 'a/b' }, 'registry.local/{repo}:{id}')).toBe(
      'registry.local/a/b:a__b-1',
    );
  });

  it(
    'builds the official eval script from the repo spec: environment, install ' +
      're-run, test files reset, dotted Django directives, the exit status kept',
    () => {
      const testPatch =
        'diff --git a/tests/model_fields/test_jsonfield.py b/tests/model_fields/test_jsonfield.py\n' +
        '--- a/tests/model_fields/test_jsonfield.py\n' +
        '+++ b/tests/model_fields/test_jsonfield.py\n@@ -1 +1 @@\n-a\n+b\n';
      const script = evalScript({
        repo: 'django/django',
        version: '3.0',
        base_commit: 'abc123',
        test_patch: testPatch,
      });
      const lines = script.split('\n');
      expect(lines.slice(0, 2)).toEqual(['#!/bin/bash', 'set -uxo pipefail']);
      expect(script).toContain("sed -i '/en_US.UTF-8/s/^# //g' /etc/locale.gen && locale-gen");
      expect(script).toContain('python -m pip install -e .');
      expect(script).toContain(
        "{ git checkout 'abc123' -- 'tests/model_fields/test_jsonfield.py' " +
          "2>/dev/null || rm -f 'tests/model_fields/test_jsonfield.py'; }",
      );
      expect(script).toContain(
        "./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 'model_fields.test_jsonfield'",
      );
      const end = lines.findIndex((l) => l.includes('>>>>> End Test Output'));
      expect(lines[end - 1]).toBe('ALIGHT_TEST_EXIT=$?');
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell expansion, not a template
      expect(lines.at(-2)).toBe('exit ${ALIGHT_TEST_EXIT:-1}');
      // A row's own script is used as it is, with the exit status recorded the same way.
      const own = evalScript({
        repo: 'x/y',
        base_commit: 'c',
        test_patch: '',
        eval_script: "#!/bin/bash\nset -uxo pipefail\nmake test\n: '>>>>> End Test Output'\n",
      });
      expect(own.split('\n').slice(2, 5)).toEqual(['make test', 'ALIGHT_TEST_EXIT=$?', ": '>>>>> End Test Output'"]);
    },
  );

  it("reads the official parser names as alight's", () => {
    expect(
      ['parse_log_scikit', 'parse_log_requests', 'parse_log_django', 'pytest-v2', 'parse_log_jest'].map(parserNamed),
    ).toEqual(['pytest-v2', 'pytest-options', 'django', 'pytest-v2', undefined]);
  });
});

describe('paired tests', () => {
  it('the exact sign-flip test is exact McNemar on 0/1 outcomes, and counts k-sample differences exactly', () => {
    for (const [gained, lost] of [
      [0, 0],
      [7, 2],
      [40, 24],
      [3, 3],
    ]) {
      const d = [...Array(gained).fill(1), ...Array(lost).fill(-1), 0, 0];
      expect(signFlipExact(d)).toBeCloseTo(mcnemarExact(lost, gained), 12);
    }
    // By hand: differences 2 and 1 give sums ±3 (each ¼) and ±1 (each ¼); an observed 3 has p = ½.
    expect(signFlipExact([2, 1])).toBeCloseTo(0.5, 12);
    expect(signFlipExact([-2, 1])).toBe(1);
    expect(signFlipExact(Array(60).fill(3))).toBeLessThan(1e-15);
  });
});
