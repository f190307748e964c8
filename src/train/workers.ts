// The Python workers of a training run, RL's or SFT's: what each is told at init (from the run's settings, through
// src/worker/settings.ts), and the supervisor that starts, replaces and stops them.
import { learningRate, type TrainConfig, trainsLora } from '../config/schema.js';
import { Worker } from '../worker/client.js';
import { checkedSettings, type TorchTraining, type WorkerSettings } from '../worker/settings.js';
import type { GroupPool } from './async-groups.js';
import { groupPool, type StepContext } from './step.js';

export type StartedWorker = { worker: Worker; endpoints: { url: string; model: string }[] };

/**
 * What starting a worker takes: its Python, its log, the run's settings (verl's overrides), its Ctrl-C, and what it
 * trains for (RL's objective unless `alight sft`).
 */
export interface WorkerStart {
  python: string;
  logFile: string;
  c: TrainConfig;
  signal: AbortSignal;
  overrides?: string[];
  env?: Record<string, string>;
  objective?: 'sft';
}

/** The torch worker's update: RL's clipped objective, or (`sft`) the next-token loss without reference or weights. */
function torchTraining(c: TrainConfig, sft: boolean): TorchTraining {
  const { lora } = c;
  return {
    objective: sft ? 'sft' : 'rl',
    kl_coef: sft ? 0 : c.klCoef,
    is_correction: sft ? 'none' : c.isCorrection,
    is_cap: c.isCap,
    lr: learningRate(c),
    weight_decay: c.weightDecay,
    max_grad_norm: c.maxGradNorm,
    clip_low: c.clipLow,
    clip_high: c.clipHigh,
    ppo_epochs: c.ppoEpochs,
    micro_batch_rows: c.microBatchRows,
    lora: trainsLora(c)
      ? {
          rank: lora.rank,
          alpha: lora.alpha,
          dropout: lora.dropout,
          targets: lora.targets.split(',').flatMap((t) => t.trim() || []),
          from: lora.from ?? null,
        }
      : null,
  };
}

/** Everything a training run's worker reads at init, checked against the settings schema before it is sent. */
export function trainingWorkerSettings(o: Pick<WorkerStart, 'c' | 'overrides' | 'objective'>): WorkerSettings {
  const { c } = o;
  const sft = o.objective === 'sft';
  if (c.backend === 'verl')
    return checkedSettings({
      backend: 'verl',
      model: c.model,
      seed: c.seed,
      kl_coef: c.klCoef,
      is_correction: c.isCorrection,
      is_cap: c.isCap,
      gpus: c.gpus,
      ray_address: c.rayAddress ?? null,
      old_logprobs: c.oldLogprobs,
      overrides: o.overrides ?? [],
    });
  return checkedSettings({
    backend: 'torch',
    model: c.model,
    name: null,
    seed: c.seed,
    threads: c.threads ?? null,
    // No more calls than harnesses can wait at once: a batch that has them all runs without waiting out the worker's
    // gather window for one that cannot come (0.5 s a batch: most of a small step's time).
    max_batch: Math.min(c.concurrency, c.n * c.batchSize),
    training: torchTraining(c, sft),
  });
}

/**
 * The worker process, initialised: its engine endpoints (one for torch, one per vLLM server for verl, given its
 * overrides). It joins `started` before it loads the model, so that Ctrl-C can stop it meanwhile.
 */
export async function startWorker(o: WorkerStart, started: Worker[]): Promise<StartedWorker> {
  const worker = Worker.start({ python: o.python, logFile: o.logFile, env: o.env });
  started.push(worker);
  if (o.signal.aborted) worker.kill('SIGTERM');
  const init = await worker.call('init', trainingWorkerSettings(o), o.c.workerTimeoutS * 1000);
  return { worker, endpoints: init.endpoints };
}

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
    if (this.o.c.asyncGroups > 0 && !this.pool) {
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
