import { describe, expect, it } from 'vitest';
import { mergeCalls, type Row, type TraceCall } from '../../src/samples/merge.js';

/** Rows as plain arrays, logprobs rounded from float32, for exact comparison. */
const plainRows = (rows: Row[]) =>
  rows.map((r) => ({
    ...r,
    tokens: Array.from(r.tokens),
    mask: Array.from(r.mask),
    logprobs: Array.from(r.logprobs, (x) => Math.round(x * 1e6) / 1e6),
  }));

const call = (seq: number, prompt: number[], completion: number[], status = 'ok'): TraceCall => ({
  seq,
  status,
  promptIds: prompt,
  completionIds: completion,
  completionLogprobs: completion.map((t) => -t / 100),
});

describe('merging calls into rows', () => {
  it(
    'puts an append-only multi-turn rollout in one row, ' + 'observations unmasked, samples masked with their logprobs',
    () => {
      const { rows, breaks } = mergeCalls(
        [
          call(0, [1, 2], [10, 11]),
          call(1, [1, 2, 10, 11, 3, 4], [12]),
          call(2, [1, 2, 10, 11, 3, 4, 12, 5], [13, 14]),
        ],
        'trajectory',
      );
      expect(breaks).toEqual([]);
      expect(plainRows(rows)).toEqual([
        {
          tokens: [1, 2, 10, 11, 3, 4, 12, 5, 13, 14],
          mask: [0, 0, 1, 1, 0, 0, 1, 0, 1, 1],
          logprobs: [0, 0, -0.1, -0.11, 0, 0, -0.12, 0, -0.13, -0.14],
          promptLength: 2,
          calls: [0, 1, 2],
        },
      ]);
    },
  );

  it('keeps interleaved sub-agent calls in two rows, not one per call', () => {
    const { rows, breaks } = mergeCalls(
      [
        call(0, [1, 2], [10]),
        call(1, [50, 51], [60]), // a sub-agent starts its own context
        call(2, [1, 2, 10, 3], [11]),
        call(3, [50, 51, 60, 52], [61]),
      ],
      'trajectory',
    );
    expect(rows.map((r) => r.calls)).toEqual([
      [0, 2],
      [1, 3],
    ]);
    // The sub-agent's first call opened a row while one was open: that is reported as a break to look at.
    expect(breaks.map((b) => b.seq)).toEqual([1]);
  });

  it('breaks where a history was retokenized, and says where', () => {
    const { rows, breaks } = mergeCalls(
      [
        call(0, [1, 2, 3], [20, 21, 22]),
        call(1, [1, 2, 3, 20, 99, 22, 4], [23]), // the harness re-sent the text; 21 came back as 99
      ],
      'trajectory',
    );
    expect(rows).toHaveLength(2);
    expect(breaks).toEqual([
      { seq: 1, row: 0, position: 4, context: [1, 2, 3, 20, 21, 22], prompt: [1, 2, 3, 20, 99, 22, 4] },
    ]);
  });

  it('skips failed calls and calls without token ids, and counts them', () => {
    const merged = mergeCalls(
      [
        call(0, [1], [2]),
        call(1, [1, 2, 3], [4], 'error'),
        { seq: 2, status: 'ok', promptIds: null, completionIds: null, completionLogprobs: null },
        call(3, [1, 2, 3], [4]),
      ],
      'trajectory',
    );
    expect(merged.skipped).toEqual({ errors: 1, withoutTokens: 1 });
    expect(merged.rows.map((r) => r.calls)).toEqual([[0, 3]]);
  });

  it('makes one row per call at the transition level', () => {
    const { rows, breaks } = mergeCalls([call(1, [1, 2, 10, 3], [11]), call(0, [1, 2], [10])], 'transition');
    expect(rows.map((r) => [r.calls, Array.from(r.tokens), r.promptLength])).toEqual([
      [[0], [1, 2, 10], 2],
      [[1], [1, 2, 10, 3, 11], 4],
    ]);
    expect(breaks).toEqual([]);
  });
});

describe('merging from stored references', () => {
  it("gives the same rows when calls say which earlier call they extend (the store's fast path)", () => {
    const plain = [
      call(0, [1, 2], [10, 11]),
      call(1, [50, 51], [60]),
      call(2, [1, 2, 10, 11, 3], [12]),
      call(3, [50, 51, 60, 52], [61]),
      call(4, [1, 2, 10, 11, 3, 12, 4], [13]),
    ];
    const withRefs = plain.map((c, i) =>
      i < 2
        ? c
        : {
            ...c,
            extends: {
              seq: c.seq - 2,
              length: plain[i - 2].promptIds!.length + plain[i - 2].completionIds!.length,
              suffix: Array.from(c.promptIds!).slice(
                plain[i - 2].promptIds!.length + plain[i - 2].completionIds!.length,
              ),
            },
          },
    );
    // Readers of promptIds on the fast path would see this throw.
    const guarded = withRefs.map((c) =>
      c.extends
        ? {
            ...c,
            get promptIds(): number[] {
              throw new Error('materialised');
            },
          }
        : c,
    );
    expect(mergeCalls(guarded, 'trajectory')).toEqual(mergeCalls(plain, 'trajectory'));
  });
});
