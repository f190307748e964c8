import { isTerminal, type RolloutState } from '../rollouts/state.js';
import { mergeCalls } from '../samples/merge.js';
import { ofPurposes } from '../samples/run-samples.js';
import type { Store } from '../store/store.js';
import { type RunRules, rulesOf } from './groups.js';

/**
 * How many merge breaks each rollout's calls make (trajectory merging, as `samples build` does), kept for finished
 * rollouts: their calls no longer change, and the merge-breaks filter needs every rollout of a run.
 */
export class BreakCounts {
  private readonly known = new Map<string, number>();
  private readonly rules = new Map<string, RunRules>();

  constructor(private readonly store: Store) {}

  /** The count, or null for calls that cannot be read (a corrupt trace fails its own row, not the page). */
  of(rollout: { id: string; run: string; state: RolloutState }): number | null {
    const cached = this.known.get(rollout.id);
    if (cached !== undefined) return cached;
    let count: number | null = null;
    try {
      // Breaks are trajectory merging's: a run trained by transitions has none.
      const rules = this.rulesOf(rollout.run);
      if (rules.level === 'trajectory') {
        const calls = ofPurposes(this.store.calls.tokenCalls(rollout.id), rules.purposes);
        count = mergeCalls(calls, 'trajectory').breaks.length;
      } else count = 0;
    } catch {}
    if (count !== null && isTerminal(rollout.state)) this.known.set(rollout.id, count);
    return count;
  }

  private rulesOf(run: string): RunRules {
    let rules = this.rules.get(run);
    if (rules === undefined) this.rules.set(run, (rules = rulesOf(this.store, run)));
    return rules;
  }

  /** The run's rollouts with at least one break, in the page order (created, id). */
  withBreaks(run: string): string[] {
    return this.store
      .rolloutStates(run)
      .filter((r) => (this.of({ ...r, run }) ?? 0) > 0)
      .map((r) => r.id);
  }
}
