import { describe, expect, it } from 'vitest';
import { type Candidate, type CurateOptions, curate } from '../../src/samples/curate.js';
import type { Row } from '../../src/samples/merge.js';
import { parseTaskFilter, passAtK, type TaskStats } from '../../src/samples/task-filter.js';

const stats = (over: Partial<TaskStats>): TaskStats => ({ n: 4, avg: 0.5, min: 0, max: 1, solved: 2, ...over });

describe('--filter', () => {
  it('reads chained comparisons, and, pass@k and rate', () => {
    const mixed = parseTaskFilter('0<avg<1');
    expect(mixed(stats({ avg: 0.5 }))).toBe(true);
    expect(mixed(stats({ avg: 1 }))).toBe(false);
    expect(mixed(stats({ avg: 0 }))).toBe(false);
    const both = parseTaskFilter('solved >= 1 and n>=4 && max==1');
    expect(both(stats({}))).toBe(true);
    expect(both(stats({ n: 3 }))).toBe(false);
    expect(parseTaskFilter('rate<=0.5')(stats({ solved: 2, n: 4 }))).toBe(true);
    expect(parseTaskFilter('pass@2>0.8')(stats({ solved: 2, n: 4 }))).toBe(true); // 1 − C(2,2)/C(4,2) = 5/6
    // Fewer rollouts than k: unknown, and an unknown task is left out.
    expect(parseTaskFilter('pass@8>=0')(stats({ n: 4 }))).toBe(false);
  });

  it('refuses what it cannot read, naming the part, and never runs it', () => {
    const cases: [string, RegExp][] = [
      ['avg<1; process.exit(1)', /cannot read "; process.exit\(1\)"/],
      ['avg', /a comparison is incomplete/],
      ['mean>0', /unknown name "mean"/],
      ['1<2', /names nothing about the task/],
      ['< avg 1', /expected a number or a name, found "<"/],
      ['avg<<1', /a comparison is incomplete/],
      ['avg 1', /a comparison is incomplete/],
      ['avg>0 and', /a comparison is incomplete/],
    ];
    for (const [text, why] of cases) expect(() => parseTaskFilter(text), text).toThrow(why);
  });

  it('computes the unbiased pass@k', () => {
    expect(passAtK(4, 0, 1)).toBe(0);
    expect(passAtK(4, 1, 1)).toBeCloseTo(0.25, 12);
    expect(passAtK(4, 2, 2)).toBeCloseTo(5 / 6, 12);
    expect(passAtK(4, 3, 2)).toBe(1);
  });
});

/** A one-row rollout: prompt [1, 2], then `sampled` (all in the loss). */
function rollout(id: string, task: string, reward: number | null, sampled: number[], extra: Partial<Candidate> = {}) {
  const tokens = [1, 2, ...sampled];
  const row: Row = {
    tokens: Int32Array.from(tokens),
    mask: Uint8Array.from(tokens.map((_, i) => (i < 2 ? 0 : 1))),
    logprobs: new Float32Array(tokens.length),
    promptLength: 2,
    calls: [0],
  };
  return { rolloutId: id, taskId: task, state: 'succeeded', reward, overlong: false, rows: [row], ...extra };
}

// Three tasks: a mixes rewards (with a duplicate and a cut reply), b always scores 1, c never does.
const candidates: Candidate[] = [
  rollout('a1', 'a', 1, [5, 6, 7]),
  rollout('a2', 'a', 1, [5, 6]),
  rollout('a3', 'a', 0, [9]),
  rollout('a4', 'a', 1, [5, 6]), // the same tokens as a2
  rollout('a5', 'a', 1, [8], { overlong: true }),
  rollout('a6', 'a', 0.5, [4, 4]),
  rollout('a7', 'a', null, [3]),
  rollout('a8', 'a', null, [], { state: 'failed', rows: [] }),
  rollout('b1', 'b', 1, [5]),
  rollout('b2', 'b', 1, [6, 6]),
  rollout('c1', 'c', 0, [7]),
  rollout('c2', 'c', 0, [7, 7]),
];
const base: CurateOptions = { select: 'best', solvedAt: 1, keepTruncated: false, valTasks: 0, seed: 0 };
const ids = (list: Candidate[]) => list.map((c) => c.rolloutId).sort();

describe('curate', () => {
  it('picks per task: best, best-n, shortest, all', () => {
    expect(ids(curate(candidates, base).train)).toEqual(['a2', 'b1', 'c1']);
    expect(ids(curate(candidates, { ...base, select: 'best-n', maxPerTask: 2 }).train)).toEqual([
      'a1',
      'a2',
      'b1',
      'b2',
      'c1',
      'c2',
    ]);
    expect(ids(curate(candidates, { ...base, select: 'shortest', minReward: 0.5 }).train)).toEqual(['a2', 'b1']);
    expect(ids(curate(candidates, { ...base, select: 'all' }).train)).toEqual(
      ['a1', 'a2', 'a3', 'a6', 'b1', 'b2', 'c1', 'c2'].sort(),
    );
  });

  it('filters tasks on all their scored rollouts, then counts every rollout left out under its first reason', () => {
    const mixed = curate(candidates, { ...base, select: 'all', filter: parseTaskFilter('0<avg<1') });
    expect(ids(mixed.train)).toEqual(['a1', 'a2', 'a3', 'a6']);
    expect(mixed.dropped).toEqual({
      failed: 1,
      'no-reward': 1,
      'task-filter': 4,
      truncated: 1,
      unrenderable: 0,
      'no-tokens': 0,
      'min-reward': 0,
      duplicate: 1,
      'not-selected': 0,
    });
    expect(mixed.tasks).toEqual({ seen: 3, kept: 1, train: 1, val: 0 });
    // A cut reply stays with --keep-truncated; the min reward applies after the task filter.
    const kept = curate(candidates, { ...base, select: 'all', keepTruncated: true, minReward: 1 });
    expect(ids(kept.train)).toEqual(['a1', 'a2', 'a5', 'b1', 'b2']);
    expect(kept.dropped['min-reward']).toBe(4);
  });

  it('holds out whole tasks for validation, the same ones for the same seed', () => {
    const split = curate(candidates, { ...base, select: 'all', valTasks: 1, seed: 7 });
    const valTasks = new Set(split.val.map((c) => c.taskId));
    expect(valTasks.size).toBe(1);
    expect(split.train.some((c) => valTasks.has(c.taskId))).toBe(false);
    expect(split.train.length + split.val.length).toBe(8);
    expect(ids(curate(candidates, { ...base, select: 'all', valTasks: 1, seed: 7 }).val)).toEqual(ids(split.val));
  });

  it('tells apart rollouts that differ only in a tool call', () => {
    // The same text, a different tool-call token: not duplicates.
    const calls = [rollout('x1', 'x', 1, [5, 100, 6]), rollout('x2', 'x', 1, [5, 101, 6])];
    expect(ids(curate(calls, { ...base, select: 'all' }).train)).toEqual(['x1', 'x2']);
  });
});
