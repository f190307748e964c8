import { tasksForStep } from '../algo/schedule.js';
import { type RolloutBatch, type RolloutJob, type RunSession, runRollouts } from '../runner/run-rollouts.js';
import type { Task } from '../runner/tasks.js';

/** A group of rollouts (one task × n) that has ended: its rollout ids, and its place in the data order. */
export interface DoneGroup {
  position: number;
  task: Task;
  ids: string[];
}

/**
 * Async rollouts: up to `inFlight` groups run at all times, across steps, their tasks taken in the run's data order
 * (the same endless seeded sequence the synchronous steps use). A step takes the first groups to complete; the others
 * carry over, their harnesses going on through the update (the gateway holds their calls while the weights change).
 */
export class GroupPool {
  private readonly running = new Set<Promise<void>>();
  private readonly done: DoneGroup[] = [];
  private wake: () => void = () => {};
  private failure: unknown = null;

  constructor(
    private readonly o: {
      tasks: Task[];
      n: number;
      seed: number;
      inFlight: number;
      start: number;
      session: RunSession;
      batch: RolloutBatch;
      jobs: (task: Task, groupId: string) => RolloutJob[];
      groupId: (position: number, task: Task) => string;
    },
    private next = o.start,
  ) {}

  /** Rollouts whose harnesses are still running. */
  get runningRollouts(): number {
    return this.running.size * this.o.n;
  }

  /** Starts groups until `inFlight` are running or waiting to be taken. */
  fill(): void {
    while (this.running.size + this.done.length < this.o.inFlight) {
      const position = this.next++;
      const task = tasksForStep(this.o.tasks, 1, position, this.o.seed)[0];
      const group = runRollouts(this.o.session, this.o.batch, this.o.jobs(task, this.o.groupId(position, task)))
        .then(
          (ids) => {
            this.done.push({ position, task, ids });
          },
          (err: unknown) => {
            this.failure ??= err;
          },
        )
        .finally(() => {
          this.running.delete(group);
          this.wake();
        });
      this.running.add(group);
    }
  }

  /** The first `count` groups to complete, in completion order (waits for them; a runner failure is thrown). */
  async take(count: number, signal: AbortSignal): Promise<DoneGroup[]> {
    const onAbort = (): void => this.wake();
    signal.addEventListener('abort', onAbort);
    try {
      while (this.done.length < count) {
        if (this.failure) throw this.failure;
        if (signal.aborted) throw new Error('interrupted');
        await new Promise<void>((resolve) => {
          this.wake = resolve;
        });
      }
      return this.done.splice(0, count);
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  /** Waits for every running group to end (their harnesses are stopped by the options' signal). */
  async settle(): Promise<void> {
    await Promise.allSettled([...this.running]);
  }
}
