import { appendFileSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { learningRate, type TrainConfig, trainsLora } from '../config/train-schema.js';
import { AlightError, ExitCode } from '../errors.js';
import { start } from '../process/launch.js';
import { asLines } from '../setup/events.js';
import { PYTHON_DIR } from '../setup/python-env.js';
import { cudaGpus, ensureVerlEnv, hasFlashAttention } from '../setup/verl-env.js';
import type { StepMetrics } from './events.js';
import { readExamples, type SftOptions, type SftResult } from './sft.js';
import { sftCpuOverrides, verlCpuEnv } from './verl-cpu.js';

/** What an `alight sft --backend verl` run needs besides its settings. */
export interface VerlSftInputs {
  data: string;
  val: string | null;
  epochs: number;
  runDir: string;
  run: string;
  /** The longest curated row, in tokens (verl's data.max_length). */
  maxLength: number;
  /** No GPU here: verl's trainer on the CPU (alight_worker/verl/cpu.py). */
  cpu: boolean;
  /** flash-attn is installed beside verl (verl's default attention, and its padding removal, need it). */
  flashAttention: boolean;
}

/**
 * alight's SFT settings as overrides of verl's SFT trainer config (sft_trainer_engine.yaml): alight's curated rows as
 * they are (data.custom_cls: alight_worker/verl/sft_data.py, no re-rendering), the model, its optimiser and LoRA, the
 * epochs, checkpoints with Hugging Face weights (what `train --init-from` starts from). On verl a step is batchSize
 * rows. `train.verl` overrides come last.
 */
export function verlSftOverrides(c: TrainConfig, o: VerlSftInputs): string[] {
  if (c.verl.nodes > 1)
    throw new AlightError(
      'alight sft --backend verl runs on one node (torchrun --standalone): drop --nodes',
      ExitCode.usage,
    );
  if (c.lora.from)
    throw new AlightError('--lora-from: alight sft --backend verl starts a new adapter only', ExitCode.usage);
  const lora = trainsLora(c)
    ? [`model.lora_rank=${c.lora.rank}`, `model.lora_alpha=${c.lora.alpha}`, `model.target_modules=${c.lora.targets}`]
    : [];
  return [
    `data.train_files=${resolve(o.data)}`,
    `data.val_files=${o.val ? resolve(o.val) : 'null'}`,
    `data.custom_cls.path=${join(PYTHON_DIR, 'alight_worker', 'verl', 'sft_data.py')}`,
    'data.custom_cls.name=AlightSftDataset',
    'data.pad_mode=no_padding',
    `data.max_length=${o.maxLength}`,
    `data.max_token_len_per_gpu=${Math.max(8192, o.maxLength)}`,
    `data.train_batch_size=${c.batch.size}`,
    `data.micro_batch_size_per_gpu=${c.optimiser.microBatchRows}`,
    'data.num_workers=0',
    `model.path=${c.model}`,
    ...lora,
    `optim.lr=${learningRate(c)}`,
    `optim.weight_decay=${c.optimiser.weightDecay}`,
    `optim.clip_grad=${c.optimiser.maxGradNorm}`,
    `trainer.total_epochs=${o.epochs}`,
    `trainer.default_local_dir=${join(o.runDir, 'verl')}`,
    'trainer.project_name=alight',
    `trainer.experiment_name=${o.run}`,
    `trainer.logger=[${['console', ...c.schedule.reportTo].join(',')}]`,
    `trainer.seed=${c.seed}`,
    `trainer.save_freq=${c.schedule.saveEvery > 0 ? c.schedule.saveEvery : -1}`,
    `trainer.test_freq=${c.schedule.saveEvery > 0 ? c.schedule.saveEvery : -1}`,
    `trainer.n_gpus_per_node=${o.cpu ? 1 : c.verl.gpus}`,
    'trainer.resume_mode=disable',
    'checkpoint.save_contents=[model,optimizer,extra,hf_model]',
    ...(o.cpu || !o.flashAttention ? sdpaOverrides : []),
    ...(o.cpu ? sftCpuOverrides : []),
    ...c.verl.overrides,
  ];
}

/** Attention without flash-attn (verl's default asks for it, and its padding removal patches it in). */
const sdpaOverrides = ['+model.override_config.attn_implementation=sdpa', 'model.use_remove_padding=False'];

/** One line of verl's console logger (`step:3 - train/loss:1.2 - val/loss:1.4`): alight's metric names, or null. */
export function readStepLine(line: string): { step: number; metrics: StepMetrics } | null {
  // A progress bar may share the line: `Epoch 1/2: 50%|█ | 1/2 [00:00<00:00]step:2 - …`.
  const m = /step:(\d+) - (.*)$/.exec(line.trim());
  if (!m) return null;
  const metrics: StepMetrics = {};
  for (const part of m[2].split(' - ')) {
    const at = part.lastIndexOf(':');
    const value = Number(part.slice(at + 1));
    if (at < 0 || !Number.isFinite(value)) continue;
    const key = part.slice(0, at);
    metrics[
      key === 'val/loss'
        ? 'val_loss'
        : key
            .replace(/^train\//, '')
            .replace(/\(B\)$/, '_b')
            .replace(/\//g, '_')
    ] = value;
  }
  // verl counts steps from 1, alight from 0.
  return { step: Number(m[1]) - 1, metrics };
}

/**
 * verl's SFT trainer under torchrun (one process a GPU, or one on the CPU), its log appended to `logFile`; `onStep`
 * gets each step's metrics as verl prints them. Resolves when it exits 0.
 */
export async function runVerlSft(
  python: string,
  overrides: string[],
  o: { gpus: number; cpu: boolean; logFile: string; signal: AbortSignal; onStep(step: number, m: StepMetrics): void },
): Promise<void> {
  const lines = (line: string): void => {
    appendFileSync(o.logFile, `${line}\n`);
    const read = readStepLine(line);
    if (read) o.onStep(read.step, read.metrics);
  };
  const child = start({
    command: python,
    args: [
      '-m',
      'torch.distributed.run',
      '--standalone',
      '--nnodes=1',
      `--nproc_per_node=${o.cpu ? 1 : o.gpus}`,
    ].concat(['-m', 'verl.trainer.sft_trainer', ...overrides]),
    cwd: PYTHON_DIR,
    env: { ...process.env, PYTHONPATH: PYTHON_DIR, ...(o.cpu ? verlCpuEnv : {}), HYDRA_FULL_ERROR: '1' },
    stdout: { lines: (line) => lines(line) },
    stderr: { file: o.logFile },
    group: true,
    signal: o.signal,
  });
  const done = await child.finished;
  if (done.exitCode !== 0)
    throw new AlightError(
      `verl's SFT trainer ${done.reason ?? `exited with code ${done.exitCode}`} (log: ${o.logFile})`,
      o.signal.aborted ? ExitCode.interrupted : ExitCode.failure,
    );
}

/**
 * `alight sft --backend verl`: the curated rows trained by verl's own SFT trainer (FSDP, one process a GPU; on the CPU
 * where there is none), its steps stored as the torch worker's are, each checkpoint's Hugging Face folder recorded
 * with its step (what `train --init-from` starts from).
 */
export async function sftOnVerl(o: SftOptions): Promise<SftResult> {
  const { store, c, run } = o;
  const examples = readExamples(o.data);
  const rows = examples.flatMap((e) => e.rows);
  const valRows = o.val ? readExamples(o.val).flatMap((e) => e.rows) : [];
  if (store.getRun(run)) throw new AlightError(`run ${run} exists: pass another --run`, ExitCode.usage);
  const runDir = resolve(store.path, '..', 'runs', run);
  const cpu = cudaGpus() === 0;
  const maxLength = Math.max(...[...rows, ...valRows].map((r) => r.tokens.length));
  const log = (message: string): void => o.onEvent({ type: 'log', message });
  const python = await ensureVerlEnv(asLines(log));
  const inputs = { data: o.data, val: o.val, epochs: o.epochs, runDir, run, maxLength, cpu };
  const overrides = verlSftOverrides(c, { ...inputs, flashAttention: hasFlashAttention(python) });
  store.ensureRun(run, 'sft', {
    train: c,
    sft: { data: resolve(o.data), val: o.val, epochs: o.epochs, backend: 'verl' },
  });
  mkdirSync(runDir, { recursive: true });
  if (cpu) log("no GPU here: verl's SFT trainer runs on the CPU (alight_worker/verl/cpu.py), for small checks only");
  const logFile = join(runDir, 'verl-sft.log');
  const steps = new Map<number, StepMetrics>();
  const perEpoch = Math.max(1, Math.floor(rows.length / c.batch.size));
  o.onEvent({ type: 'sft-started', run, steps: perEpoch * o.epochs, examples: examples.length, workerLog: logFile });
  await runVerlSft(python, overrides, {
    gpus: c.verl.gpus,
    cpu,
    logFile,
    signal: o.signal,
    onStep: (step, m) => {
      const metrics = { ...steps.get(step), ...m, epoch: Math.floor(step / perEpoch) };
      steps.set(step, metrics);
      if ('loss' in m) o.onEvent({ type: 'step-end', step, metrics, checkpoint: null });
    },
  });
  const done = [...steps.keys()]
    .sort((a, b) => a - b)
    .map((step) => {
      const checkpoint = hfCheckpoint(join(runDir, 'verl', `global_step_${step + 1}`, 'huggingface'));
      store.putTrainStep(run, step, steps.get(step)!, checkpoint);
      return { step, metrics: steps.get(step)!, checkpoint };
    });
  const last = done.at(-1)?.checkpoint;
  if (!last) throw new AlightError(`verl wrote no Hugging Face checkpoint after its last step (log: ${logFile})`);
  return { run, runDir, steps: done, checkpoint: last };
}

/** The folder when verl wrote a whole Hugging Face model there (config and weights), else null. */
function hfCheckpoint(folder: string): string | null {
  if (!existsSync(join(folder, 'config.json'))) return null;
  return readdirSync(folder).some((f) => f.endsWith('.safetensors') || f.endsWith('.bin')) ? folder : null;
}
