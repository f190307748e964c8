import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { testPython } from '../../src/eval/grade/interpreter.js';
import type { StatusMap } from '../../src/eval/grade/log-parsers.js';
import { testSources, undeclaredXfails, xfailSources } from '../../src/eval/grade/xfail-sources.js';
import { tempDir } from '../helpers/gateway.js';

// Which tests may xfail, read by Python's parser from the test sources (each way a test file declares one), and the
// verdict's statuses with every other XFAIL a failure.
const files: Record<string, string> = {
  'tests/test_marks.py': [
    'import pytest',
    'from pytest import mark',
    'flaky = pytest.mark.xfail(reason="later")',
    '',
    '@pytest.mark.xfail',
    'def test_decorated(): assert 0',
    '',
    '@flaky',
    'def test_alias(): assert 0',
    '',
    'def test_call(): pytest.xfail("not yet")',
    '',
    '@pytest.mark.parametrize("x", [1, pytest.param(2, marks=mark.xfail)])',
    'def test_param(x): assert x == 1',
    '',
    'def test_plain(): assert 1',
    '',
    '@mark.xfail',
    'class TestMarked:',
    '    def test_inherits(self): assert 0',
    '',
    'class TestPlain:',
    '    pytestmark = []',
    '    def test_plain(self): assert 1',
  ].join('\n'),
  'tests/test_module.py': 'import pytest\npytestmark = pytest.mark.xfail\n\ndef test_any(): assert 0\n',
  'tests/test_none.py': 'def test_plain(): assert 1\n',
  'hooks/conftest.py':
    'import pytest\ndef pytest_collection_modifyitems(items):\n    for i in items: i.add_marker(pytest.mark.xfail)\n',
  'hooks/test_hooked.py': 'def test_plain(): assert 0\n',
};

describe('xfail sources', () => {
  const ws = tempDir();
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(dirname(join(ws, file)), { recursive: true });
    writeFileSync(join(ws, file), text);
  }
  const sources = xfailSources(
    testSources(
      ws,
      Object.keys(files).filter((f) => !f.endsWith('conftest.py')),
    ),
    testPython(),
  );

  it("finds each way a test's own source declares an xfail, and no other test", () => {
    expect([...sources.tests].sort()).toEqual(
      [
        'tests/test_marks.py::TestMarked::test_inherits',
        'tests/test_marks.py::test_alias',
        'tests/test_marks.py::test_call',
        'tests/test_marks.py::test_decorated',
        'tests/test_marks.py::test_param',
      ].sort(),
    );
    // A module's pytestmark and a conftest that marks tests cover every test of the file.
    expect([...sources.wholeFiles].sort()).toEqual(['hooks/test_hooked.py', 'tests/test_module.py']);
  });

  it('keeps a declared XFAIL a pass and makes any other a FAILED, with a flag; other statuses as they were', () => {
    const map: StatusMap = new Map([
      ['tests/test_marks.py::test_decorated', 'XFAIL'],
      ['tests/test_marks.py::test_param[2]', 'XFAIL'],
      ['tests/test_marks.py::test_plain', 'XFAIL'],
      ['tests/test_marks.py::TestPlain::test_plain', 'XFAIL'],
      ['tests/test_none.py::test_plain', 'XFAIL'],
      ['hooks/test_hooked.py::test_plain', 'XFAIL'],
      ['tests/test_none.py::test_other', 'PASSED'],
    ]);
    const { map: judged, flags } = undeclaredXfails(map, () => sources);
    expect(Object.fromEntries(judged)).toEqual({
      'tests/test_marks.py::test_decorated': 'XFAIL',
      'tests/test_marks.py::test_param[2]': 'XFAIL',
      'tests/test_marks.py::test_plain': 'FAILED',
      'tests/test_marks.py::TestPlain::test_plain': 'FAILED',
      'tests/test_none.py::test_plain': 'FAILED',
      'hooks/test_hooked.py::test_plain': 'XFAIL',
      'tests/test_none.py::test_other': 'PASSED',
    });
    expect(flags.map((f) => f.file)).toEqual(['tests/test_marks.py', 'tests/test_marks.py', 'tests/test_none.py']);
    expect(flags[0].reason).toMatch(/^xfail-without-mark: /);
  });
});
