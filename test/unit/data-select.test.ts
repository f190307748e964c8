import { describe, expect, it } from 'vitest';
import { reverseDiff } from '../../src/data/patch.js';
import { bandOf, parseRateRange, selectTasks } from '../../src/data/select.js';
import { type Graded, verdictOf } from '../../src/data/validate.js';
import { ungraded } from '../../src/eval/grade/grader.js';

const graded = (o: {
  error?: string;
  f2p?: [string[], string[]];
  p2p?: [string[], string[]];
  results?: number;
}): Graded => {
  const report = ungraded('x', 'p', o.error ?? null);
  if (!o.error) {
    const f2p = { success: o.f2p?.[0] ?? [], failure: o.f2p?.[1] ?? [] };
    const p2p = { success: o.p2p?.[0] ?? [], failure: o.p2p?.[1] ?? [] };
    report.tests_status = { FAIL_TO_PASS: f2p, PASS_TO_PASS: p2p };
    report.resolved = f2p.failure.length === 0 && p2p.failure.length === 0;
  }
  return { report, results: o.results ?? 2 };
};

describe('verdictOf', () => {
  const goldOk = graded({ f2p: [['a'], []], p2p: [['b'], []] });
  const baseOk = graded({ f2p: [[], ['a']], p2p: [['b'], []] });
  it('valid when the gold patch resolves and the base fails F2P and passes P2P', () => {
    expect(verdictOf(goldOk, baseOk)).toEqual({ verdict: 'valid', detail: '' });
  });
  it('names each way an environment is broken, with the tests concerned', () => {
    expect(verdictOf(graded({ f2p: [[], ['a']], p2p: [[], ['b']] }), baseOk)).toEqual({
      verdict: 'gold-unresolved',
      detail: 'failing with the gold patch: a, b',
    });
    expect(verdictOf(goldOk, graded({ f2p: [['a'], []], p2p: [['b'], []] })).verdict).toBe('f2p-passes-without-fix');
    expect(verdictOf(goldOk, graded({ f2p: [[], ['a']], p2p: [[], ['b']] })).detail).toBe('failing at the base: b');
    expect(verdictOf(graded({ error: 'patch apply failed' }), baseOk).verdict).toBe('gold-does-not-apply');
    expect(verdictOf(graded({ f2p: [[], ['a']], results: 0 }), baseOk).verdict).toBe('tests-do-not-run');
    expect(verdictOf(goldOk, graded({ error: 'tests timed out' })).verdict).toBe('timeout');
    expect(verdictOf(graded({ error: 'podman pull failed: manifest unknown' }), baseOk).verdict).toBe('image-missing');
    expect(verdictOf(graded({ error: 'the grading pod did not run: ErrImagePull' }), baseOk).verdict).toBe(
      'image-missing',
    );
  });
  it('lists at most five tests and counts the rest', () => {
    const many = ['t1', 't2', 't3', 't4', 't5', 't6', 't7'];
    expect(verdictOf(graded({ f2p: [[], many] }), baseOk).detail).toBe(
      'failing with the gold patch: t1, t2, t3, t4, t5 and 2 more',
    );
  });
});

describe('reverseDiff', () => {
  it('swaps headers, signs, ranges, modes, creations and renames; twice is the original', () => {
    const diff = [
      'diff --git a/x.py b/x.py',
      'index 1111111..2222222 100644',
      '--- a/x.py',
      '+++ b/x.py',
      '@@ -1,3 +1,4 @@',
      ' keep',
      '-old',
      '+new',
      '+-- looks like a header',
      ' end',
      'diff --git a/n.txt b/n.txt',
      'new file mode 100755',
      '--- /dev/null',
      '+++ b/n.txt',
      '@@ -0,0 +1 @@',
      '+n',
      '\\ No newline at end of file',
      'diff --git a/o b/p',
      'similarity index 90%',
      'rename from o',
      'rename to p',
      '',
    ].join('\n');
    const rev = reverseDiff(diff);
    expect(rev.split('\n').slice(0, 10)).toEqual([
      'diff --git b/x.py a/x.py',
      'index 2222222..1111111 100644',
      '--- b/x.py',
      '+++ a/x.py',
      '@@ -1,4 +1,3 @@',
      ' keep',
      '-new',
      '--- looks like a header',
      '+old',
      ' end',
    ]);
    expect(rev).toContain('deleted file mode 100755\n--- b/n.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-n\n\\ No newline');
    expect(rev).toContain('rename from p\nrename to o');
    expect(reverseDiff(rev)).toBe(diff);
  });
});

describe('reverseDiff and a missing newline at the end of a file', () => {
  it('keeps the marker with the line it follows, on either side', () => {
    const diff =
      'diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n';
    const rev = reverseDiff(diff);
    expect(rev).toBe(
      'diff --git b/f a/f\n--- b/f\n+++ a/f\n@@ -1,2 +1,2 @@\n a\n-c\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n',
    );
    expect(reverseDiff(rev)).toBe(diff);
  });
});

describe('data select', () => {
  it('reads solve-rate ranges and refuses what is not one', () => {
    expect(parseRateRange('0<r<1')).toEqual({ lo: 0, loInclusive: false, hi: 1, hiInclusive: false });
    expect(parseRateRange(' 0.25 <= r <= 0.75 ')).toEqual({ lo: 0.25, loInclusive: true, hi: 0.75, hiInclusive: true });
    for (const bad of ['r<1', '0<r<2', '0.8<r<0.2', '0<x<1', 'mixed']) expect(parseRateRange(bad), bad).toBeNull();
  });

  const probes = new Map(
    [
      ['s', 4],
      ['m1', 2],
      ['m2', 1],
      ['u1', 0],
      ['u2', 0],
      ['u3', 0],
    ].map(([uid, passes]) => [uid as string, { uid: uid as string, run: 'p', k: 4, passes: passes as number }]),
  );
  const tasks = ['s', 'm1', 'm2', 'u1', 'u2', 'u3', 'np'].map((uid) => ({ uid, repo: 'r' }));
  const rate = parseRateRange('0<r<1')!;

  it('keeps the mixed band, adds the unsolved asked for, drops the rest with reasons', () => {
    const { kept, heldOut, drops } = selectTasks(tasks, probes, { rate, addUnsolved: 1, val: 0, seed: 3 });
    expect(kept.slice(0, 2)).toEqual(['m1', 'm2']);
    expect(kept).toHaveLength(3);
    expect(heldOut).toEqual([]);
    const rules = Object.fromEntries(drops.map((d) => [d.uid, d.rule]));
    expect(rules).toMatchObject({ s: 'solve-rate', np: 'not-probed' });
    expect(drops.filter((d) => d.rule === 'unsolved')).toHaveLength(2);
    expect(bandOf(probes.get('s'))).toBe('solved');
    expect(bandOf(undefined)).toBe('not-probed');
  });

  it('is seeded: the same seed, the same choice; the hold-out comes out of the kept', () => {
    const a = selectTasks(tasks, probes, { rate, addUnsolved: 2, val: 2, seed: 7 });
    const b = selectTasks(tasks, probes, { rate, addUnsolved: 2, val: 2, seed: 7 });
    expect(a).toEqual(b);
    expect(a.kept).toHaveLength(2);
    expect(a.heldOut).toHaveLength(2);
    expect(a.kept.filter((u) => a.heldOut.includes(u))).toEqual([]);
    const seeds = new Set(
      [1, 2, 3, 4, 5, 6, 7, 8].map(
        (seed) => selectTasks(tasks, probes, { rate, addUnsolved: 1, val: 0, seed }).kept[2],
      ),
    );
    expect(seeds.size).toBeGreaterThan(1);
  });
});
