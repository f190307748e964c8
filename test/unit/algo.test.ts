import { describe, expect, it } from 'vitest';
import { groupAdvantages, settleRewards } from '../../src/algo/advantages.js';
import { lossWeights, type RowShape } from '../../src/algo/loss-weights.js';

// Worked by hand: rewards [1, 0, 0, 1] in one group have mean 0.5 and unbiased std √(4·0.25/3) = 0.5773503.
const closeTo = (actual: ArrayLike<number>, expected: number[]) =>
  expected.forEach((e, i) => {
    expect(actual[i]).toBeCloseTo(e, 6);
  });

describe('advantages', () => {
  const rewards = [1, 0, 0, 1, 0.7, 0.3, 0.3, 0.3];
  const groups = ['a', 'a', 'a', 'a', 'solo', 'same', 'same', 'same'];

  it('grpo: (R − mean) / (std + 1e-6), std unbiased', () => {
    const a = 0.5 / (Math.sqrt(1 / 3) + 1e-6);
    closeTo(groupAdvantages(rewards, groups, 'grpo'), [a, -a, -a, a, 0.7, 0, 0, 0]);
    expect(a).toBeCloseTo(0.8660239, 6);
  });

  it('drgrpo: R − mean', () => {
    closeTo(groupAdvantages(rewards, groups, 'drgrpo'), [0.5, -0.5, -0.5, 0.5, 0.7, 0, 0, 0]);
  });

  it('rloo: R − the mean of the others', () => {
    closeTo(groupAdvantages(rewards, groups, 'rloo'), [2 / 3, -2 / 3, -2 / 3, 2 / 3, 0.7, 0, 0, 0]);
  });

  it('missing rewards count as 0, or leave the group', () => {
    expect(settleRewards([1, null, 0], 'zero')).toEqual({ kept: [0, 1, 2], rewards: [1, 0, 0] });
    const dropped = settleRewards([1, null, 0], 'drop');
    expect(dropped).toEqual({ kept: [0, 2], rewards: [1, 0] });
    // Dropping changes the baseline of the others: [1, 0] has mean 0.5, not 1/3.
    closeTo(groupAdvantages(dropped.rewards, ['g', 'g'], 'drgrpo'), [0.5, -0.5]);
    closeTo(groupAdvantages(settleRewards([1, null, 0], 'zero').rewards, ['g', 'g', 'g'], 'drgrpo'), [
      2 / 3,
      -1 / 3,
      -1 / 3,
    ]);
  });
});

describe('loss weights', () => {
  // Rollout 0 was split into three rows of 2, 3 and 5 loss tokens; rollout 1 is one row of 10.
  const rows: RowShape[] = [
    { rollout: 0, lossTokens: 2 },
    { rollout: 0, lossTokens: 3 },
    { rollout: 0, lossTokens: 5 },
    { rollout: 1, lossTokens: 10 },
  ];
  const total = (w: Float64Array, rollout: number) =>
    rows.reduce((a, r, i) => a + (r.rollout === rollout ? w[i] * r.lossTokens : 0), 0);

  it('per-rollout-mean weighs a three-row rollout exactly like a one-row rollout of the same length', () => {
    const w = lossWeights(rows, 2, 'per-rollout-mean', 16);
    closeTo(w, [0.05, 0.05, 0.05, 0.05]);
    expect(total(w, 0)).toBeCloseTo(0.5, 12);
    expect(total(w, 1)).toBeCloseTo(0.5, 12);
  });

  it('token-mean, seq-mean-token-mean, seq-mean-token-sum and constant', () => {
    closeTo(lossWeights(rows, 2, 'token-mean', 16), [1 / 20, 1 / 20, 1 / 20, 1 / 20]);
    closeTo(lossWeights(rows, 2, 'seq-mean-token-mean', 16), [1 / 8, 1 / 12, 1 / 20, 1 / 40]);
    closeTo(lossWeights(rows, 2, 'seq-mean-token-sum', 16), [1 / 4, 1 / 4, 1 / 4, 1 / 4]);
    closeTo(lossWeights(rows, 2, 'constant', 16), [1 / 32, 1 / 32, 1 / 32, 1 / 32]);
    // seq-mean-token-mean gives the split rollout three votes: the bias per-rollout-mean removes.
    expect(total(lossWeights(rows, 2, 'seq-mean-token-mean', 16), 0)).toBeCloseTo(0.75, 12);
  });

  it('gives rows without loss tokens no weight', () => {
    expect(
      Array.from(
        lossWeights(
          [
            { rollout: 0, lossTokens: 0 },
            { rollout: 0, lossTokens: 4 },
          ],
          1,
          'seq-mean-token-mean',
          8,
        ),
      ),
    ).toEqual([0, 1 / 8]);
  });
});

describe('summary statistics', () => {
  it(
    'gives no mean for no numbers and no spread for fewer ' + 'than two; the spread is the sample one (n − 1)',
    async () => {
      const { mean, sampleStd } = await import('../../src/algo/stats.js');
      expect(mean([])).toBeNull();
      expect(mean([1, 2, 6])).toBe(3);
      expect(sampleStd([4])).toBeNull();
      expect(sampleStd([1, 3])).toBeCloseTo(Math.SQRT2, 12);
    },
  );
});
