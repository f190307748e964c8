// Where a rollout's rewards come from, in one place. Each source is a name here and (if it scores after the
// rollouts) a file beside this one; training, record and eval judge score through `scoreRollouts`, and every reward
// row is written through `row` (by `putReward` or `scoreRollouts`), so that a row's source is always a registry name.
import type { RewardConfig } from '../config/reward.js';
import type { Store } from '../store/store.js';
import { judgeScorer } from './judge.js';
import type { RewardScorer, RewardSource, ScorerContext } from './types.js';

export const rewardSources = {
  // The harness's own, POSTed to /r/{token}/reward while the rollout runs.
  harness: { verifiable: true },
  // The reward command, run after the harness ends (--reward-cmd).
  'reward-cmd': { verifiable: true },
  // reward.judge: a model scores the recorded trajectories against a rubric, a group at a time.
  judge: { verifiable: false, scorer: judgeScorer },
} satisfies Record<string, RewardSource>;

/** A reward row's source: a source's name, or `combined`, the weighted sum of the others (reward.weights). */
export type RewardSourceName = keyof typeof rewardSources | 'combined';

/**
 * The writer of reward rows by a source's name; `scoreRollouts` writes its scorers' (their names are its registry's,
 * which a test may extend) through the same `row`. The ordering rule: a rollout's reward is its latest row (the
 * store's summaries read it so), and rows come in the order the sources can write them: the harness while it runs,
 * the reward command after it, the scorers after the group in `rewardSources`' order (`scoreRollouts`), `combined`
 * last, so that the latest is the most derived.
 */
export function putReward(store: Store, id: string, source: RewardSourceName, value: number, reason: string | null) {
  row(store, id, source, value, reason);
}

const row = (store: Store, id: string, source: string, value: number, reason: string | null): void =>
  store.addReward(id, value, reason, source);

/** A rollout's latest reward from a verifiable source: a re-scored rollout keeps its own check. */
export function verifiableReward(store: Store, id: string, sources: Record<string, RewardSource> = rewardSources) {
  return (
    store
      .rewards(id)
      .filter((r) => sources[r.source]?.verifiable)
      .at(-1)?.value ?? null
  );
}

/** The scorers a run's reward settings ask for, in the registry's order, and how long a group's stragglers may run. */
export interface Scoring {
  scorers: { name: string; scorer: RewardScorer }[];
  groupDeadlineMs?: number;
  weights: RewardConfig['weights'];
  sources: Record<string, RewardSource>;
}

export function openScoring(ctx: ScorerContext, sources: Record<string, RewardSource> = rewardSources): Scoring {
  const scorers = Object.entries(sources).flatMap(([name, s]) => {
    const scorer = s.scorer?.(ctx);
    return scorer ? [{ name, scorer }] : [];
  });
  const deadlines = scorers.flatMap((s) => s.scorer.groupDeadlineMs ?? []);
  return {
    scorers,
    groupDeadlineMs: deadlines.length ? Math.min(...deadlines) : undefined,
    weights: ctx.reward.weights,
    sources,
  };
}

/**
 * The one function training, record and eval judge score with after the rollouts: each scorer in turn over `ids`
 * (`onSource` is told which: a step's phase), its scores stored as rows of its own, then, where the weights ask for
 * it, their weighted sum with the verifiable reward (`combined`). What a scorer could not score is in `failed`: in no
 * baseline, never trained on.
 */
export async function scoreRollouts(
  store: Store,
  scoring: Scoring,
  ids: string[],
  onSource?: (name: string) => void,
): Promise<{ failed: Set<string>; metrics: Record<string, number> }> {
  const failed = new Set<string>();
  const metrics: Record<string, number> = {};
  const scores = new Map<string, Map<string, number>>();
  try {
    for (const { name, scorer } of scoring.scorers) {
      onSource?.(name);
      const outcome = await scorer.score(ids, (s) => {
        row(store, s.id, name, s.value, s.reason);
        scores.set(s.id, (scores.get(s.id) ?? new Map()).set(name, s.value));
      });
      for (const id of outcome.failed) failed.add(id);
      Object.assign(metrics, outcome.metrics);
    }
  } finally {
    // What was scored before a scorer failed is kept whole: its rows, and their sum.
    for (const [id, bySource] of scores) if (!failed.has(id)) combine(store, scoring, id, bySource);
  }
  return { failed, metrics };
}

/**
 * `combined` = weights.verifiable × the verifiable reward + Σ weight × score over the scorers' (a source without a
 * weight in reward.weights weighs 1). Not written where it would only repeat the one score.
 */
function combine(store: Store, { weights, sources }: Scoring, id: string, bySource: Map<string, number>): void {
  const weight = (name: string): number => (weights as Record<string, number>)[name] ?? 1;
  const alone = weights.verifiable === 0 && bySource.size === 1 && weight([...bySource.keys()][0]) === 1;
  if (alone) return;
  let value = weights.verifiable * (verifiableReward(store, id, sources) ?? 0);
  for (const [name, score] of bySource) value += weight(name) * score;
  putReward(store, id, 'combined', value, null);
}
