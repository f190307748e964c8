import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { tasksForStep } from '../algo/schedule.js';
import type { TrainConfig } from '../config/train-schema.js';
import { AlightError, ExitCode } from '../errors.js';
import { meanLossBatch } from '../samples/batch.js';
import type { Row } from '../samples/merge.js';
import { readSafetensors, writeSafetensors } from '../samples/safetensors.js';
import { asLines } from '../setup/events.js';
import { ensurePythonEnv } from '../setup/python-env.js';
import type { Store } from '../store/store.js';
import type { StepMetrics } from './events.js';
import { runTrackers, type Trackers } from './trackers.js';
import { startWorker } from './workers.js';

/** What `alight sft` reports as it runs; `src/ui/` renders these. */
export type SftEvent =
  | { type: 'sft-started'; run: string; steps: number; examples: number; workerLog: string }
  | { type: 'step-end'; step: number; metrics: StepMetrics; checkpoint: string | null }
  | { type: 'log'; message: string };

export interface SftOptions {
  store: Store;
  /** The model, optimiser, LoRA, seed, batch size (examples a step), saveEvery and trackers: train.* as RL reads them. */
  c: TrainConfig;
  run: string;
  /** train.safetensors of `samples curate`; val: its val.safetensors (its loss at each save and at the end). */
  data: string;
  val: string | null;
  epochs: number;
  signal: AbortSignal;
  onEvent: (event: SftEvent) => void;
}

export interface SftResult {
  run: string;
  runDir: string;
  steps: { step: number; metrics: StepMetrics; checkpoint: string | null }[];
  /** The last checkpoint: what `alight train --init-from <run>` starts from. */
  checkpoint: string;
}

/** An example: the rows of one curated rollout. */
export type Example = { rolloutId: string; reward: number; rows: Row[] };

/**
 * `alight sft`: supervised fine-tuning on curated examples with the torch worker: each step a seeded draw of
 * `batchSize` examples (reshuffled each epoch), the loss their tokens' mean cross-entropy, checkpoints as RL's.
 */
export async function sft(o: SftOptions): Promise<SftResult> {
  const { store, c, run } = o;
  const examples = readExamples(o.data);
  // Absolute: the worker runs in its own folder.
  const val = o.val && resolve(o.val);
  const steps = o.epochs * Math.ceil(examples.length / c.batch.size);
  if (store.getRun(run)) throw new AlightError(`run ${run} exists: pass another --run`, ExitCode.usage);
  store.ensureRun(run, 'sft', {
    train: c,
    sft: { data: resolve(o.data), val, epochs: o.epochs },
  });
  const runDir = resolve(store.path, '..', 'runs', run);
  mkdirSync(join(runDir, 'batches'), { recursive: true });
  const workerLog = join(runDir, 'worker.log');
  const log = (message: string): void => o.onEvent({ type: 'log', message });
  const python = await ensurePythonEnv(asLines(log));
  const started: Awaited<ReturnType<typeof startWorker>>['worker'][] = [];
  const kill = (): void => started.at(-1)?.kill('SIGTERM');
  o.signal.addEventListener('abort', kill, { once: true });
  let trackers: Trackers | null = null;
  try {
    trackers = await runTrackers(c, { runDir, run }, log, { objective: 'sft', epochs: o.epochs, data: o.data });
    const { worker } = await startWorker(
      { python, logFile: workerLog, c, signal: o.signal, objective: 'sft' },
      started,
    );
    o.onEvent({ type: 'sft-started', run, steps, examples: examples.length, workerLog });
    const timeoutMs = c.worker.timeoutS * 1000;
    const done: SftResult['steps'] = [];
    for (let step = 0; step < steps; step++) {
      if (o.signal.aborted) throw new AlightError(`interrupted at step ${step} of ${run}`, ExitCode.interrupted);
      const batch = writeStepBatch(
        join(runDir, 'batches', `step-${step}.safetensors`),
        tasksForStep(examples, c.batch.size, step, c.seed),
      );
      // RL's clip fraction and rollout KL mean nothing here: no rollout policy, no ratio.
      const {
        clip_fraction: _c,
        kl_rollout: _k,
        ...metrics
      } = (await worker.call('train_step', { batch_path: batch, step }, timeoutMs)).metrics;
      const last = step === steps - 1;
      const due = last || (c.schedule.saveEvery > 0 && (step + 1) % c.schedule.saveEvery === 0);
      const metricsNow: StepMetrics = { ...metrics, epoch: Math.floor((step * c.batch.size) / examples.length) };
      if (due && val) metricsNow.val_loss = (await worker.call('eval_loss', { batch_path: val }, timeoutMs)).loss;
      const checkpoint = due ? join(runDir, 'checkpoints', `step-${step}`) : null;
      if (checkpoint) await worker.call('save', { path: checkpoint }, timeoutMs);
      store.putTrainStep(run, step, metricsNow, checkpoint);
      done.push({ step, metrics: metricsNow, checkpoint });
      o.onEvent({ type: 'step-end', step, metrics: metricsNow, checkpoint });
      trackers?.step(step, metricsNow, []);
    }
    return { run, runDir, steps: done, checkpoint: done.at(-1)?.checkpoint ?? '' };
  } finally {
    o.signal.removeEventListener('abort', kill);
    for (const w of started) await w.stop();
    await trackers?.close();
  }
}

/** The examples of a `samples curate` file, grouped back into their rollouts' rows. */
export function readExamples(file: string): Example[] {
  if (!existsSync(file)) throw new AlightError(`no file ${file} (alight samples curate writes it)`, ExitCode.input);
  let read: ReturnType<typeof readSafetensors>;
  try {
    read = readSafetensors(file);
  } catch (err) {
    throw new AlightError(`cannot read ${file}: ${(err as Error).message}`, ExitCode.input);
  }
  const { tensors, metadata } = read;
  const meta = JSON.parse(metadata.alight ?? 'null') as {
    advantage?: string;
    rollouts?: { rollout_id: string; reward: number }[];
  } | null;
  if (meta?.advantage !== 'sft' || !meta.rollouts)
    throw new AlightError(
      `${file} is not a file of curated examples (alight samples curate writes them)`,
      ExitCode.input,
    );
  const t = tensors as unknown as {
    input_ids: Int32Array;
    row_offsets: BigInt64Array;
    prompt_lengths: Int32Array;
    loss_mask: Uint8Array;
    rollout_logprobs: Float32Array;
    rollout_index: Int32Array;
  };
  const examples: Example[] = meta.rollouts.map((r) => ({ rolloutId: r.rollout_id, reward: r.reward, rows: [] }));
  for (let b = 0; b < t.prompt_lengths.length; b++) {
    const [start, end] = [Number(t.row_offsets[b]), Number(t.row_offsets[b + 1])];
    examples[t.rollout_index[b]].rows.push({
      tokens: t.input_ids.slice(start, end),
      mask: t.loss_mask.slice(start, end),
      logprobs: t.rollout_logprobs.slice(start, end),
      promptLength: t.prompt_lengths[b],
      calls: [],
    });
  }
  return examples;
}

/** A step's examples as a batch whose weights make the loss their loss tokens' mean. */
export function writeStepBatch(file: string, examples: readonly Example[]): string {
  const tensors = meanLossBatch(
    examples.map((e) => ({ rolloutId: e.rolloutId, groupId: null, reward: e.reward, rows: e.rows })),
  );
  writeSafetensors(file, tensors, {
    alight: JSON.stringify({ version: 1, advantage: 'sft', loss_norm: 'token-mean' }),
  });
  return file;
}
