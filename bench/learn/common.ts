// What bench:learn and bench:rft share: the model, the tasks, the evaluation and its settings, and running a step.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AlightError } from '../../src/errors.js';
import { probeOrThrow } from '../../src/process/launch.js';
import type { Evaluation } from './report.js';

export const env = (name: string, fallback: number): number => Number(process.env[name] ?? fallback);
export const settings = {
  model: 'smollm2-135m-instruct',
  steps: env('BENCH_LEARN_STEPS', 50),
  every: env('BENCH_LEARN_EVERY', 25),
  // Sampled pass@1 over this many seeded samples a task, at the training temperature and nucleus: base and last
  // checkpoint only (~10 min each here). Greedy moves less than the sampled rate (bench/BENCHMARKS.md).
  samples: env('BENCH_LEARN_SAMPLES', 4),
  lr: env('BENCH_LEARN_LR', 5e-6),
  batchTasks: env('BENCH_LEARN_BATCH', 8),
  group: env('BENCH_LEARN_GROUP', 8),
  seed: env('BENCH_LEARN_SEED', 0),
  threads: 2,
  // Dr. GRPO (no std division, every token weighted 1/(N·H)) on both sides; BENCH_LEARN_OBJECTIVE=grpo for GRPO's
  // defaults, which made the model worse (bench/BENCHMARKS.md).
  objective: process.env.BENCH_LEARN_OBJECTIVE === 'grpo' ? 'grpo' : 'drgrpo',
  maxTokens: 48,
  // The training samples' temperature; both sides score logprobs at temperature 1.
  temperature: env('BENCH_LEARN_TEMPERATURE', 1),
  topP: env('BENCH_LEARN_TOP_P', 0.9),
  // Replies cut at maxTokens leave the loss (alight's train.batch.dropOverlong, TRL's mask_truncated_completions).
  dropOverlong: process.env.BENCH_LEARN_OVERLONG !== '0',
  // Where alight's harnesses run (--runner): a process each (local) or episodes of warm hosts (pool).
  runner: process.env.BENCH_LEARN_RUNNER ?? 'local',
};
export const root = fileURLToPath(new URL('../..', import.meta.url));
export const bin = join(root, 'bin', 'alight.js');
export const learnResults = join(root, 'bench', 'learn', 'results');
export const work = join(homedir(), '.cache', 'alight', 'bench-learn');
export const tasks = (split: string): string => join(root, 'examples', 'arithmetic', `${split}.jsonl`);

/** A command with its output shown, failing the benchmark when it fails; its wall seconds. */
export async function step(cmd: string, args: string[], cwd = root, env: NodeJS.ProcessEnv = {}): Promise<number> {
  const started = performance.now();
  const [code] = await once(spawn(cmd, args, { cwd, stdio: 'inherit', env: { ...process.env, ...env } }), 'close');
  if (code !== 0) throw new AlightError(`${cmd} ${args.slice(0, 3).join(' ')} … exited with ${code}`);
  return (performance.now() - started) / 1000;
}

/** The middle value (the upper of the two middle ones for an even count): a step time robust to one slow step. */
export const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** A run's steps as `alight runs show --json` gives them (run in `dir`, the project holding its store). */
export function runSteps(
  dir: string,
  run: string,
): { metrics: Record<string, number | null>; checkpoint: string | null }[] {
  const shown = JSON.parse(probeOrThrow(process.execPath, [bin, 'runs', 'show', run, '--json'], { cwd: dir })) as {
    steps: { metrics: Record<string, number | null>; checkpoint: string | null }[];
  };
  return shown.steps;
}

/** Pass@1 of a model folder on the held-out split (evaluate.py), written to `out`/eval-`name`.json. */
export async function evaluate(
  python: string,
  model: string,
  name: string,
  sampled: boolean,
  out = learnResults,
): Promise<Evaluation> {
  const file = join(out, `eval-${name}.json`);
  const args = ['--model', model, '--tasks', tasks('heldout'), '--out', file];
  args.push('--max-tokens', String(settings.maxTokens), '--batch', '128');
  if (sampled) args.push('--samples', String(settings.samples), '--top-p', String(settings.topP));
  if (sampled) args.push('--temperature', String(settings.temperature));
  await step(python, [join(root, 'bench/learn/evaluate.py'), ...args], root, { PYTHONPATH: join(root, 'python') });
  return JSON.parse(readFileSync(file, 'utf8'));
}

/** The model both benchmarks train: SmolLM2-135M-Instruct converted from its GGUF once (alight models convert). */
export async function benchModel(): Promise<string> {
  const model = join(work, 'model');
  if (!existsSync(join(model, 'config.json')))
    await step(process.execPath, [bin, 'models', 'convert', settings.model, '--out', model]);
  return model;
}

/** The arithmetic harness's sampling, as both sides of bench:learn train with it. */
export const harnessEnv = () => ({
  ARITHMETIC_TEMPERATURE: String(settings.temperature),
  ARITHMETIC_TOP_P: String(settings.topP),
  ARITHMETIC_MAX_TOKENS: String(settings.maxTokens),
});

/**
 * The project folder's alight.config.yaml: what the flags do not reach. Drop groups that carry no signal, all of a
 * step's harnesses at once (the worker batches their calls), the worker's torch threads. Earlier runs' weights in the
 * folder go first: their numbers are kept elsewhere, and three seeds' checkpoints (~3 GB a run) filled this machine's
 * disk.
 */
export function benchConfig(dir: string, maxResponseTokens = settings.maxTokens): void {
  dropEarlierWeights(dir);
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'alight.config.yaml'),
    `train:\n  worker:\n    threads: ${settings.threads}\n  optimiser:\n    microBatchRows: 16\n` +
      `  batch:\n    dropZeroVariance: true\n    maxResponseTokens: ${maxResponseTokens}\n` +
      `    dropOverlong: ${settings.dropOverlong}\n`,
  );
}

/** The checkpoints of the runs in a bench project folder, and the adapters merged from them. */
function dropEarlierWeights(dir: string): void {
  const runs = join(dir, '.alight', 'runs');
  for (const run of existsSync(runs) ? readdirSync(runs) : [])
    rmSync(join(runs, run, 'checkpoints'), { recursive: true, force: true });
  for (const entry of existsSync(dir) ? readdirSync(dir) : [])
    if (entry.startsWith('merged-')) rmSync(join(dir, entry), { recursive: true, force: true });
}

/**
 * `alight train` on the training split as bench:learn runs it (B tasks × G rollouts a step, Dr. GRPO, seeded), from
 * `init` (`--model <folder>` or `--init-from <run>`), in `dir`; its wall seconds and each step's metrics.
 */
export async function alightTrain(o: {
  dir: string;
  run: string;
  init: string[];
  steps: number;
  lr: number;
  extra: string[];
}) {
  benchConfig(o.dir);
  const args = ['train', ...o.init, '--tasks', tasks('train'), '-n', String(settings.group)];
  args.push('--batch-size', String(settings.batchTasks), '--steps', String(o.steps));
  args.push('--concurrency', String(settings.batchTasks * settings.group));
  args.push('--lr', String(o.lr), '--seed', String(settings.seed), '--runner', settings.runner, ...o.extra);
  const loss = settings.objective === 'grpo' ? 'per-rollout-mean' : 'constant';
  args.push('--advantage', settings.objective, '--loss-norm', loss);
  const harness = ['--', 'node', join(root, 'examples/arithmetic/harness.mjs')];
  const seconds = await step(process.execPath, [bin, ...args, '--run', o.run, ...harness], o.dir, harnessEnv());
  return { seconds, steps: runSteps(o.dir, o.run).map((s) => s.metrics) };
}
