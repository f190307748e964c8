import { type AdvantageEstimator, advantageEstimators, groupAdvantages } from '../algo/advantages.js';
import type { Store } from '../store/store.js';

/** The run's advantage estimator: its train config's, GRPO for a recorded run. */
export function estimatorOf(store: Store, run: string): AdvantageEstimator {
  const config = JSON.parse(store.getRun(run)?.config ?? '{}') as { train?: { advantage?: string } };
  const named = config.train?.advantage;
  return (named && named in advantageEstimators ? named : 'grpo') as AdvantageEstimator;
}

/**
 * Each succeeded rollout's advantage within its group, for the run's `groups`, by the run's estimator: what a batch
 * of whole groups would give it (a training step also drops groups and cuts rows, which moves no baseline).
 */
export function advantagesIn(store: Store, run: string, groups: readonly string[]): Map<string, number> {
  const members = store.groupRewards(run, [...new Set(groups)]);
  const advantages = groupAdvantages(
    members.map((m) => m.reward ?? 0),
    members.map((m) => m.group_id),
    estimatorOf(store, run),
  );
  return new Map(members.map((m, i) => [m.id, advantages[i]]));
}
