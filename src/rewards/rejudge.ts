import { mean, pearson } from '../algo/stats.js';
import type { RewardConfig } from '../config/reward.js';
import { AlightError, ExitCode } from '../errors.js';
import type { Store } from '../store/store.js';
import { openScoring, scoreRollouts, verifiableReward } from './index.js';

export interface RejudgeSummary {
  run: string;
  rollouts: number;
  judged: number;
  failed: number;
  judgeMean: number | null;
  /** Over the judged rollouts that also have a verifiable reward: its mean, and how the two agree. */
  verifiable: { rollouts: number; mean: number | null; pearson: number | null } | null;
  metrics: Record<string, number>;
}

/**
 * `alight eval judge`: a recorded run's succeeded rollouts scored by a judge after the fact (its scores added as rewards
 * of their own; a run recorded with a check gets both, side by side, so a judge can be measured against the check
 * before it is trusted where there is none).
 */
export async function rejudgeRun(store: Store, reward: RewardConfig, run: string): Promise<RejudgeSummary> {
  if (!reward.judge)
    throw new AlightError('no judge: pass --judge <url> (or set reward.judge in the config)', ExitCode.usage);
  // The judge's settings are checked first (its key's variable set, its scale), as before any run is read.
  const scoring = openScoring({ store, run, reward });
  if (!store.getRun(run)) throw new AlightError(`no run ${run} in ${store.path} (alight runs list)`, ExitCode.input);
  const rollouts = store.rolloutSummaries({ run }).filter((r) => r.state === 'succeeded');
  if (rollouts.length === 0) throw new AlightError(`run ${run} has no succeeded rollouts to judge`, ExitCode.input);
  const outcome = await scoreRollouts(
    store,
    { ...scoring, scorers: scoring.scorers.filter((s) => s.name === 'judge') },
    rollouts.map((r) => r.id),
  );
  const judged = rollouts.filter((r) => !outcome.failed.has(r.id));
  const scores = judged.map(
    (r) =>
      store
        .rewards(r.id)
        .filter((x) => x.source === 'judge')
        .at(-1)!.value,
  );
  const pairs = judged.flatMap((r, i) => {
    const v = verifiableReward(store, r.id);
    return v === null ? [] : [[v, scores[i]] as const];
  });
  return {
    run,
    rollouts: rollouts.length,
    judged: judged.length,
    failed: outcome.failed.size,
    judgeMean: mean(scores),
    verifiable: pairs.length
      ? { rollouts: pairs.length, mean: mean(pairs.map((p) => p[0])), pearson: pearson(pairs) }
      : null,
    metrics: outcome.metrics,
  };
}
