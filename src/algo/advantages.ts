/**
 * Advantage estimators (docs/design.md#advantages-and-loss-weights): one scalar per rollout, computed within its group.
 * Register new ones here.
 */
export const advantageEstimators = {
  /** (R − mean) / (unbiased std + 1e-6). */
  grpo: (rewards: readonly number[]): number[] => {
    const mean = average(rewards);
    const std = Math.sqrt(rewards.reduce((a, r) => a + (r - mean) ** 2, 0) / (rewards.length - 1));
    return rewards.map((r) => (r - mean) / (std + 1e-6));
  },
  /** R − mean (Dr. GRPO: no division by the standard deviation). */
  drgrpo: (rewards: readonly number[]): number[] => {
    const mean = average(rewards);
    return rewards.map((r) => r - mean);
  },
  /** R − the mean of the other rewards of the group (leave-one-out). */
  rloo: (rewards: readonly number[]): number[] => {
    const sum = rewards.reduce((a, b) => a + b, 0);
    return rewards.map((r) => r - (sum - r) / (rewards.length - 1));
  },
} satisfies Record<string, (rewards: readonly number[]) => number[]>;

export type AdvantageEstimator = keyof typeof advantageEstimators;

/**
 * Advantages of `rewards` (one per rollout) grouped by `groups` (the group of each rollout). A group of one has no
 * baseline: its advantage is its reward, whatever the estimator (as verl does).
 */
export function groupAdvantages(
  rewards: readonly number[],
  groups: readonly string[],
  estimator: AdvantageEstimator,
): Float64Array {
  const members = new Map<string, number[]>();
  groups.forEach((g, i) => {
    const list = members.get(g);
    if (list) list.push(i);
    else members.set(g, [i]);
  });
  const out = new Float64Array(rewards.length);
  for (const indices of members.values()) {
    const group = indices.map((i) => rewards[i]);
    const advantages = group.length === 1 ? group : advantageEstimators[estimator](group);
    indices.forEach((i, k) => {
      out[i] = advantages[k];
    });
  }
  return out;
}

function average(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0) / values.length;
}

export const missingRewardPolicies = ['zero', 'drop'] as const;
export type MissingRewardPolicy = (typeof missingRewardPolicies)[number];

/**
 * Rewards for the estimators: a rollout without one counts as 0 (`zero`), or leaves its group and the batch (`drop`,
 * so that it shifts no baseline). Returns the indices kept and their rewards.
 */
export function settleRewards(
  rewards: readonly (number | null)[],
  policy: MissingRewardPolicy,
): { kept: number[]; rewards: number[] } {
  const kept: number[] = [];
  const values: number[] = [];
  rewards.forEach((r, i) => {
    if (r === null && policy === 'drop') return;
    kept.push(i);
    values.push(r ?? 0);
  });
  return { kept, rewards: values };
}
