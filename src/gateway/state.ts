import type { Rollouts } from '../rollouts/service.js';
import { isTerminal } from '../rollouts/state.js';
import type { Store } from '../store/store.js';
import type { Endpoints } from './endpoints.js';
import type { CallContext } from './model-call.js';

/**
 * The gateway's one mutable state, owned here and changed only through these methods (the admin routes, the agent
 * routes and the in-process handle all use them): paused or not, the model calls held for a resume, the requests
 * being handled and the model calls among them.
 */
export class GatewayState {
  /** Where the gateway listens, known once it does. */
  url = '';
  private pausedNow = false;
  /** Calls held while paused, released by resume (or close). */
  private readonly held = new Set<() => void>();
  private readonly requests = new Set<Promise<void>>();
  /** The model calls under way, each with its rollout. */
  private readonly calls = new Map<AbortController, string>();

  constructor(
    readonly rollouts: Rollouts,
    readonly endpoints: Endpoints,
    readonly context: CallContext,
    private readonly holdWhilePausedMs: number,
  ) {}

  /** The store the gateway records rollouts, calls, rewards and events in. */
  get store(): Store {
    return this.context.store;
  }

  /**
   * Takes the `seq` of the rollout's next model call; taken when the call arrives, in the same tick as the check that
   * its rollout is live.
   */
  nextCallSeq(rolloutId: string): number {
    return this.context.store.calls.nextSeq(rolloutId);
  }

  get paused(): boolean {
    return this.pausedNow;
  }

  pause(): void {
    this.pausedNow = true;
  }

  /** Takes calls again, and answers the held ones at once. */
  resume(): void {
    this.pausedNow = false;
    this.release();
  }

  /** Waits (up to the hold time) for a resume; true if the gateway is taking calls again. */
  async holdUntilResumed(): Promise<boolean> {
    if (this.holdWhilePausedMs <= 0) return false;
    let wake = (): void => {};
    const resumed = new Promise<void>((resolve) => {
      wake = resolve;
    });
    this.held.add(wake);
    const timer = setTimeout(wake, this.holdWhilePausedMs);
    await resumed;
    clearTimeout(timer);
    this.held.delete(wake);
    return !this.pausedNow;
  }

  /** Counts a request as being handled until it settles. */
  track(request: Promise<void>): void {
    this.requests.add(request);
    void request.finally(() => this.requests.delete(request));
  }

  /** Runs a model call of `rolloutId` that `stop` can abort. */
  async abortable<T>(abort: AbortController, rolloutId: string, call: () => Promise<T>): Promise<T> {
    this.calls.set(abort, rolloutId);
    try {
      return await call();
    } finally {
      this.calls.delete(abort);
    }
  }

  /** Pauses, then waits (at most `timeoutMs`) for the model calls under way; held calls wait for the resume. */
  async drain(timeoutMs: number): Promise<void> {
    this.pausedNow = true;
    const deadline = Date.now() + timeoutMs;
    while (this.calls.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  }

  /**
   * Why a call still open at close ends: its harness was stopped first (its rollout ended: a timeout, a kill, whatever
   * process of it still held the connection), or the gateway is shutting down under a live harness.
   */
  private stopReason(rolloutId: string): string {
    const rollout = this.rollouts.get(rolloutId);
    if (!rollout || !isTerminal(rollout.state)) return 'interrupted: the gateway shut down';
    return (
      `interrupted: the harness was stopped before the answer (its rollout ended ${rollout.state}` +
      `${rollout.error ? `: ${rollout.error}` : ''})`
    );
  }

  /**
   * For close: pauses, wakes held calls (they are then refused), aborts the calls under way, waits for every request.
   */
  async stop(timeoutMs: number): Promise<void> {
    this.pausedNow = true;
    this.release();
    for (const [abort, rolloutId] of this.calls) abort.abort(new Error(this.stopReason(rolloutId)));
    const deadline = Date.now() + timeoutMs;
    while (this.requests.size > 0 && Date.now() < deadline) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.allSettled([...this.requests]),
        new Promise((r) => {
          timer = setTimeout(r, deadline - Date.now());
        }),
      ]);
      clearTimeout(timer);
    }
  }

  snapshot(): { paused: boolean; inflight: number; cachedRollouts: number } {
    return {
      paused: this.pausedNow,
      inflight: this.calls.size,
      cachedRollouts: this.store.calls.cachedRollouts,
    };
  }

  private release(): void {
    for (const wake of this.held) wake();
    this.held.clear();
  }
}
