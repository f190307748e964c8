import { isTerminal, type RolloutState } from '../rollouts/state.js';
import { mergeCalls } from '../samples/merge.js';
import type { Store } from '../store/store.js';

/**
 * How many merge breaks each rollout's calls make (trajectory merging, as `samples build` does), kept for finished
 * rollouts: their calls no longer change, and the merge-breaks filter needs every rollout of a run.
 */
export class BreakCounts {
  private readonly known = new Map<string, number>();

  constructor(private readonly store: Store) {}

  of(rollout: { id: string; state: RolloutState }): number {
    const cached = this.known.get(rollout.id);
    if (cached !== undefined) return cached;
    const count = mergeCalls(this.store.calls.tokenCalls(rollout.id), 'trajectory').breaks.length;
    if (isTerminal(rollout.state)) this.known.set(rollout.id, count);
    return count;
  }

  /** The run's rollouts with at least one break, in the page order (created, id). */
  withBreaks(run: string): string[] {
    return this.store
      .rolloutStates(run)
      .filter((r) => this.of(r) > 0)
      .map((r) => r.id);
  }
}
