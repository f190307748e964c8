/**
 * How the token losses of a step are summed (docs/design.md#advantages-and-loss-weights): the weight of every loss
 * token of each row.
 */
export const lossNorms = [
  'per-rollout-mean',
  'token-mean',
  'seq-mean-token-mean',
  'seq-mean-token-sum',
  'constant',
] as const;
export type LossNorm = (typeof lossNorms)[number];

export interface RowShape {
  /** Index of the row's rollout among the step's rollouts. */
  rollout: number;
  /** Loss tokens (mask 1) in the row. */
  lossTokens: number;
}

/**
 * The weight of each loss token of each row, so that the objective is Σ weight · ℓ over the step.
 * `rollouts` is N, the rollouts in the step; `budget` is H, the response budget (for `constant`).
 */
export function lossWeights(rows: readonly RowShape[], rollouts: number, norm: LossNorm, budget: number): Float64Array {
  const out = new Float64Array(rows.length);
  const rowsCount = rows.length;
  switch (norm) {
    case 'per-rollout-mean': {
      // Every rollout counts once however many rows it was split into: 1 / (N · T_r).
      const perRollout = new Float64Array(rollouts);
      for (const r of rows) perRollout[r.rollout] += r.lossTokens;
      rows.forEach((r, i) => {
        out[i] = 1 / (rollouts * perRollout[r.rollout]);
      });
      break;
    }
    case 'token-mean': {
      const total = rows.reduce((a, r) => a + r.lossTokens, 0);
      out.fill(1 / total);
      break;
    }
    case 'seq-mean-token-mean':
      rows.forEach((r, i) => {
        out[i] = 1 / (rowsCount * r.lossTokens);
      });
      break;
    case 'seq-mean-token-sum':
      out.fill(1 / rowsCount);
      break;
    case 'constant':
      out.fill(1 / (rollouts * budget));
      break;
  }
  // A row without loss tokens contributes nothing; keep its weight finite.
  rows.forEach((r, i) => {
    if (r.lossTokens === 0) out[i] = 0;
  });
  return out;
}
