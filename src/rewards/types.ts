import type { RewardConfig } from '../config/reward.js';
import type { Store } from '../store/store.js';

/** One rollout's score from a source, before it is stored as a reward row. */
export interface Scored {
  id: string;
  value: number;
  /** Why (a judge's explanation), or null. */
  reason: string | null;
}

/** What a scorer made of the rollouts it was given, besides the scores it handed over as it went. */
export interface ScoreOutcome {
  /** The rollouts it could not score: in no baseline, never trained on. */
  failed: Set<string>;
  /** Counters for the step's metrics (the judge's calls, tokens, …). */
  metrics: Record<string, number>;
}

/** A source that scores after the rollouts: it reads what the store recorded of them, a group (or one) at a time. */
export interface RewardScorer {
  /** Each score goes to `keep` as soon as it is known: a scorer that fails later (a spent token budget) loses none. */
  score(ids: string[], keep: (scored: Scored) => void): Promise<ScoreOutcome>;
  /** Stragglers of a group are stopped this long after the rest ended, so that whole groups are scored (ms). */
  groupDeadlineMs?: number;
}

/** What a scorer is opened with: the run's store and name, and its reward settings. */
export interface ScorerContext {
  store: Store;
  run: string;
  reward: RewardConfig;
}

/**
 * A place a reward comes from. Verifiable sources check the task (the harness, a reward command): what
 * reward.weights.verifiable weighs. A source with a scorer scores after the rollouts, when the run's reward settings
 * ask for it (the scorer is null otherwise); one without writes its rows while the rollout runs.
 */
export interface RewardSource {
  verifiable: boolean;
  scorer?: (ctx: ScorerContext) => RewardScorer | null;
}
