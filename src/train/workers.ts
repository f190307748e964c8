// The Python workers of a training run, RL's or SFT's: what each is told at init (from the run's settings, through
// src/worker/settings.ts), and the supervisor that starts, replaces and stops them.
import { learningRate, type TrainConfig, trainsLora } from '../config/train-schema.js';
import { AlightError, ExitCode } from '../errors.js';
import { Worker } from '../worker/client.js';
import { checkedSettings, type TorchTraining, type WorkerSettings } from '../worker/settings.js';

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
    kl_coef: sft ? 0 : c.optimiser.klCoef,
    is_correction: sft ? 'none' : c.optimiser.isCorrection,
    is_cap: c.optimiser.isCap,
    lr: learningRate(c),
    weight_decay: c.optimiser.weightDecay,
    max_grad_norm: c.optimiser.maxGradNorm,
    clip_low: c.optimiser.clipLow,
    clip_high: c.optimiser.clipHigh,
    ppo_epochs: c.optimiser.ppoEpochs,
    micro_batch_rows: c.optimiser.microBatchRows,
    lora: trainsLora(c)
      ? {
          rank: lora.rank,
          alpha: lora.alpha,
          dropout: lora.dropout,
          targets: loraTargets(lora.targets),
          from: lora.from ?? null,
        }
      : null,
  };
}

/** train.lora.targets' comma-separated names; none at all (an empty setting) is the default, every linear layer. */
function loraTargets(spec: string): string[] {
  const names = spec.split(',').flatMap((t) => t.trim() || []);
  return names.length ? names : ['all-linear'];
}

/** Everything a training run's worker reads at init, checked against the settings schema before it is sent. */
export function trainingWorkerSettings(o: Pick<WorkerStart, 'c' | 'overrides' | 'objective'>): WorkerSettings {
  const { c } = o;
  const sft = o.objective === 'sft';
  if (!c.model)
    throw new AlightError('no model: pass --model <Hugging Face model folder> or set train.model', ExitCode.usage);
  if (c.backend === 'verl')
    return checkedSettings({
      backend: 'verl',
      model: c.model,
      seed: c.seed,
      kl_coef: c.optimiser.klCoef,
      is_correction: c.optimiser.isCorrection,
      is_cap: c.optimiser.isCap,
      gpus: c.verl.gpus,
      ray_address: c.verl.rayAddress ?? null,
      old_logprobs: c.verl.oldLogprobs,
      overrides: o.overrides ?? [],
    });
  return checkedSettings({
    backend: 'torch',
    model: c.model,
    name: null,
    seed: c.seed,
    threads: c.worker.threads ?? null,
    // No more calls than harnesses can wait at once: a batch that has them all runs without waiting out the worker's
    // gather window for one that cannot come (0.5 s a batch: most of a small step's time).
    max_batch: Math.min(c.rollouts.concurrency, c.rollouts.n * c.batch.size),
    training: torchTraining(c, sft),
  });
}

/**
 * The worker process, initialised: its engine endpoints (one for torch, one per vLLM server for verl, given its
 * overrides). It joins `started` before it loads the model, so that Ctrl-C can stop it meanwhile.
 */
export async function startWorker(o: WorkerStart, started: Worker[]): Promise<StartedWorker> {
  const settings = trainingWorkerSettings(o);
  const worker = Worker.start({ python: o.python, logFile: o.logFile, env: o.env });
  started.push(worker);
  if (o.signal.aborted) worker.kill('SIGTERM');
  const init = await worker.call('init', settings, o.c.worker.timeoutS * 1000);
  return { worker, endpoints: init.endpoints };
}
