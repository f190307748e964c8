import { type AdvantageEstimator, groupAdvantages } from '../algo/advantages.js';
import { runTrainSettings } from '../config/run-settings.js';
import type { MergeLevel } from '../config/train-schema.js';
import type { CallPurpose } from '../store/calls.js';
import type { GroupRule, Store } from '../store/store.js';

/** What a run's training settings say about its groups and rows (a recorded run: the defaults). */
export interface RunRules {
  estimator: AdvantageEstimator;
  level: MergeLevel;
  purposes: CallPurpose[];
  group: GroupRule;
}

export function rulesOf(store: Store, run: string): RunRules {
  const train = runTrainSettings(store, run);
  return {
    estimator: train.batch.advantage,
    level: train.batch.level,
    purposes: train.batch.purposes,
    group: { failedAsZero: train.rollouts.failed === 'zero', dropMissing: train.batch.missingReward === 'drop' },
  };
}

/**
 * Each group member's advantage within its group, for the run's `groups`, by the run's estimator and rules (`rulesOf`):
 * what a step of whole groups would give it (a step also leaves out rollouts whose calls made no rows).
 */
export function advantagesIn(
  store: Store,
  run: string,
  groups: readonly string[],
  rules: RunRules,
): Map<string, number> {
  const members = store.groupRewards(run, [...new Set(groups)], rules.group);
  const advantages = groupAdvantages(
    members.map((m) => m.reward),
    members.map((m) => m.group_id),
    rules.estimator,
  );
  return new Map(members.map((m, i) => [m.id, advantages[i]]));
}
