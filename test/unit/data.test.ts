import { describe, expect, it } from 'vitest';
import { nearDuplicatePairs } from '../../src/data/dedupe.js';
import { defaultMinHash, jaccard, lshParams, shingles } from '../../src/data/minhash.js';
import { patchHash, patchStats } from '../../src/data/patch.js';
import { detectFormat, parseTask } from '../../src/data/task.js';
import { row } from '../helpers/data-fixtures.js';

describe('task data parts', () => {
  it(
    "counts a diff's files, hunks and lines, test files apart, " +
      'and hashes it without index lines or trailing spaces',
    () => {
      const patch =
        'diff --git a/src/x.py b/src/x.py\nindex 1..2\n--- a/src/x.py\n' +
        '+++ b/src/x.py\n@@ -1,2 +1,2 @@\n-a\n+b\n@@ -9 +9 @@\n+c\n' +
        'diff --git a/tests/test_x.py b/tests/test_x.py\n' +
        '--- a/tests/test_x.py\n+++ b/tests/test_x.py\n@@ -1 +1 @@\n-t\n+u\n';
      expect(patchStats(patch)).toEqual({
        files: ['src/x.py', 'tests/test_x.py'],
        sourceFiles: ['src/x.py'],
        hunks: 3,
        lines: 5,
        sourceLines: 3,
      });
      expect(patchHash(patch.replace('index 1..2\n', 'index 9..8\n').replace('+b\n', '+b   \n'))).toBe(
        patchHash(patch),
      );
      expect(patchHash(patch.replace('+b\n', '+B\n'))).not.toBe(patchHash(patch));
    },
  );

  it('reads FAIL_TO_PASS as a JSON string or a list, says why a row is invalid, and detects SWE-smith rows', () => {
    const at = { source: 's', format: 'auto' as const, file: 'f', line: 1 };
    const asString = parseTask(row('a__b-1'), at);
    const asList = parseTask({ ...row('a__b-1'), FAIL_TO_PASS: ['tests/test_a__b-1.py::test_fix'] }, at);
    expect(asString.ok && asList.ok && asString.task.fail_to_pass).toEqual(['tests/test_a__b-1.py::test_fix']);
    // the same task, however encoded
    expect(asString.ok && asList.ok && asString.task.uid === asList.task.uid).toBe(true);
    expect(parseTask({ ...row('a__b-1'), FAIL_TO_PASS: '["x", 3]' }, at)).toEqual({
      ok: false,
      reason: 'FAIL_TO_PASS: expected a list of test names or a JSON string holding one, got "[\\"x\\", 3]"',
    });
    expect(parseTask([1], at)).toEqual({ ok: false, reason: 'not a JSON object' });
    expect(detectFormat({ repo: 'swesmith/a__b.1234abcd', instance_id: 'a__b.1234abcd.pr_12' })).toBe('swe-smith');
    expect(detectFormat({ repo: 'a/b', install_config: {} })).toBe('swe-rebench');
  });

  it('chooses LSH bands as datasketch does, and finds the near-duplicate pairs that exact Jaccard confirms', () => {
    expect(lshParams(0.8, 128)).toEqual({ bands: 9, rows: 13 }); // datasketch 2.0: MinHashLSH(0.8, 128) → b 9, r 13
    const base = Array.from({ length: 80 }, (_, i) => `word${i}`).join(' ');
    const near = base.replace('word40', 'other');
    const far = Array.from({ length: 80 }, (_, i) => `term${i}`).join(' ');
    expect(jaccard(shingles(base, 5), shingles(near, 5))).toBeCloseTo(71 / 81, 6);
    // Links enough to join the group (0, 2 and 3), each verified; the far text in none.
    const { pairs } = nearDuplicatePairs([base, far, near, base.toUpperCase()], defaultMinHash);
    expect(pairs.map(([i, j]) => [i, j]).sort()).toEqual([
      [0, 2],
      [0, 3],
    ]);
    for (const [, , similarity] of pairs) expect(similarity).toBeGreaterThanOrEqual(0.8);
    expect(shingles('two words', 5)).toHaveLength(1);
    expect(shingles('', 5)).toHaveLength(0);
  });
});
