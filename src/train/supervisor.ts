// The RL run's Python workers: the current one, the async group pool it serves, and every one started.
import type { Worker } from '../worker/client.js';
import type { GroupPool } from './async-groups.js';
import { groupPool, type StepContext } from './step.js';
import { type StartedWorker, startWorker, type WorkerStart } from './workers.js';

/** A signal that aborts when the run's does (Ctrl-C) or, with `workerEnded` as the reason, when `worker` exits. */
export function abortedByRunOrWorker(
  run: AbortSignal,
  worker: Worker,
): { signal: AbortSignal; abort(why: string): void; release(): void } {
  const controller = new AbortController();
  const abort = (): void => controller.abort();
  run.addEventListener('abort', abort, { once: true });
  void worker.exit.then(() => controller.abort(workerEnded));
  return {
    signal: controller.signal,
    abort: (why) => controller.abort(why),
    release: () => run.removeEventListener('abort', abort),
  };
}

/** The error of the rollouts a dying worker takes with it (they are redone by the step's next attempt). */
export const workerEnded = 'stopped: the worker serving it ended';

/**
 * The run's Python workers: the current one, the async group pool it serves, and every one started (all stopped when
 * the run ends). Ctrl-C stops whichever worker is current, even while it is still loading the model.
 */
export class WorkerSupervisor {
  /** Restarts after a worker died, so far. */
  restarts = 0;
  private readonly started: Worker[] = [];
  private latest: StartedWorker | null = null;
  private pool: { pool: GroupPool; stop: ReturnType<typeof abortedByRunOrWorker> } | null = null;
  private readonly stopCurrent = (): void => this.started.at(-1)?.kill('SIGTERM');

  constructor(private readonly o: WorkerStart) {
    o.signal.addEventListener('abort', this.stopCurrent, { once: true });
  }

  get current(): StartedWorker {
    return this.latest!;
  }

  /** A new current worker, initialised. */
  async start(): Promise<StartedWorker> {
    this.latest = await startWorker(this.o, this.started);
    return this.latest;
  }

  /**
   * Async groups (asyncGroups > 0) outlive a step: made at the first step that needs them, they stop with the run or
   * with the worker that serves them.
   */
  poolFor(ctx: StepContext, step: number): GroupPool | undefined {
    if (this.o.c.rollouts.asyncGroups > 0 && !this.pool) {
      const stop = abortedByRunOrWorker(this.o.signal, this.current.worker);
      this.pool = { pool: groupPool(ctx, step, stop.signal), stop };
    }
    return this.pool?.pool;
  }

  /**
   * Stops the async harnesses still running (the run ended, or their worker died) and waits for them; `why` becomes
   * their rollouts' error.
   */
  async stopPool(why: string): Promise<void> {
    if (!this.pool) return;
    const { pool, stop } = this.pool;
    this.pool = null;
    stop.abort(why);
    await pool.settle();
  }

  /** Ctrl-C no longer stops a worker: the run is ending. */
  unwatch(): void {
    this.o.signal.removeEventListener('abort', this.stopCurrent);
  }

  async stopAll(): Promise<void> {
    for (const w of this.started) await w.stop();
  }
}
