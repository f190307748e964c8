import { mean, pearson } from '../algo/stats.js';
import { AlightError, ExitCode } from '../errors.js';
import type { Store } from '../store/store.js';
import { type JudgeOutcome, type JudgeRun, judgeRollouts, verifiableReward } from './rewards.js';

export interface RejudgeSummary {
  run: string;
  rollouts: number;
  judged: number;
  failed: number;
  judgeMean: number | null;
  /** Over the judged rollouts that also have a verifiable reward: its mean, and how the two agree. */
  verifiable: { rollouts: number; mean: number | null; pearson: number | null } | null;
  metrics: JudgeOutcome['metrics'];
}

/**
 * `alight eval judge`: a recorded run's succeeded rollouts scored by a judge after the fact (its scores added as rewards
 * of their own; a run recorded with a check gets both, side by side, so a judge can be measured against the check
 * before it is trusted where there is none).
 */
export async function rejudgeRun(store: Store, j: JudgeRun, run: string): Promise<RejudgeSummary> {
  if (!store.getRun(run)) throw new AlightError(`no run ${run} in ${store.path} (alight runs list)`, ExitCode.input);
  const rollouts = store.rolloutSummaries({ run }).filter((r) => r.state === 'succeeded');
  if (rollouts.length === 0) throw new AlightError(`run ${run} has no succeeded rollouts to judge`, ExitCode.input);
  const outcome = await judgeRollouts(
    store,
    j,
    run,
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
