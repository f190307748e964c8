/**
 * Rejection-sampling fine-tuning of a real model, then RL from it, as a user would run it: SmolLM2-135M-Instruct's
 * own attempts at reasoning-gym's chain sums recorded through examples/arithmetic/harness.mjs (`alight record
 * --serve-vllm`, k a task on the first N training tasks), the passing ones curated (`alight samples curate
 * --min-reward 1`), supervised fine-tuning on them (`alight sft`), held-out pass@1 before and after with bench:learn's
 * evaluation and paired tests, and RL started from the SFT checkpoint (`alight train --init-from`): its first steps'
 * training reward beside the base's.
 *
 *   npm run bench:rft     # BENCH_RFT_TASKS (400), BENCH_RFT_K (8), BENCH_RFT_PER_TASK (2), BENCH_RFT_EPOCHS (2),
 *                         # BENCH_RFT_LR (1e-5), BENCH_RFT_BATCH (16), BENCH_RFT_RL_STEPS (5)
 *                         # BENCH_RFT_BASE=<eval-base.json>: the base's evaluation from bench:learn, same settings
 *                         # BENCH_RFT_SOURCE=hint: distillation instead: the harness told each answer (a teacher with
 *                         # privileged information), its traces rendered for the student without the hint
 *
 * 400 tasks × 8 is as many sampled replies as bench:learn's 50 RL steps (8 × 8 a step). Writes bench/rft/results/.
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runEntry } from '../commands/index.js';
import { probeOrThrow } from '../src/process/launch.js';
import { ensurePythonEnv } from '../src/setup/python-env.js';
import { setupProgress } from '../src/ui/setup-progress.js';
import {
  alightTrain,
  benchConfig,
  benchModel,
  bin,
  env,
  evaluate,
  harnessEnv,
  root,
  runSteps,
  settings,
  step,
  tasks,
  work,
} from './learn/common.js';
import { type Evaluation, paired, pairedSampled } from './learn/report.js';

const rft = {
  tasks: env('BENCH_RFT_TASKS', 400),
  k: env('BENCH_RFT_K', 8),
  perTask: env('BENCH_RFT_PER_TASK', 2),
  epochs: env('BENCH_RFT_EPOCHS', 2),
  lr: env('BENCH_RFT_LR', 1e-5),
  batch: env('BENCH_RFT_BATCH', 16),
  rlSteps: env('BENCH_RFT_RL_STEPS', 5),
  source: process.env.BENCH_RFT_SOURCE === 'hint' ? 'hint' : 'own',
};
// What the hinted harness adds to each question, removed before the student's rows are rendered.
const HINT = String.raw` \(Hint: the answer is [^)]*\.\)`;
const out = join(root, 'bench', 'rft', 'results', rft.source);
const dir = join(work, `rft-${rft.source}`);
const alightIn = (args: string[], extraEnv = {}) => step(process.execPath, [bin, ...args], dir, extraEnv);
const json = (file: string) => JSON.parse(readFileSync(file, 'utf8'));

/** The base's held-out evaluation: bench:learn's when named (the same settings), else made here. */
async function baseEvaluation(python: string, model: string): Promise<Evaluation> {
  const given = process.env.BENCH_RFT_BASE;
  if (!given) return evaluate(python, model, 'base', true, out);
  copyFileSync(given, join(out, 'eval-base.json'));
  return json(given);
}

/** The policy's attempts, recorded: k a task on the first N training tasks, vLLM's CPU build serving. */
async function record(model: string, run: string): Promise<number> {
  const file = join(dir, 'probe-tasks.jsonl');
  const lines = readFileSync(tasks('train'), 'utf8').trim().split('\n').slice(0, rft.tasks);
  writeFileSync(file, `${lines.join('\n')}\n`);
  const args = ['record', '--serve-vllm', model, '--device', 'cpu', '--tasks', file, '-n', String(rft.k)];
  args.push('--concurrency', '64', '--run', run, '--', 'node', join(root, 'examples/arithmetic/harness.mjs'));
  return alightIn(args, { ...harnessEnv(), ...(rft.source === 'hint' && { ARITHMETIC_HINT: '1' }) });
}

await runEntry(async () => {
  const started = performance.now();
  mkdirSync(out, { recursive: true });
  benchConfig(dir);
  const python = await ensurePythonEnv(setupProgress(), ['learn']);
  const model = await benchModel();
  const base = await baseEvaluation(python, model);
  const stamp = Date.now();
  const [probe, sftRun, rlRun, data] = ['rft-probe', 'rft-sft', 'rft-rl']
    .map((n) => `${n}-${stamp}`)
    .concat(join(dir, `data-${stamp}`));
  const recordSeconds = await record(model, probe);
  const curateArgs = ['samples', 'curate', '--run', probe, '--min-reward', '1', '--select', 'best-n'];
  if (rft.source === 'hint') curateArgs.push('--render', model, '--strip', HINT);
  const curated = JSON.parse(
    probeOrThrow(
      process.execPath,
      [bin, ...curateArgs, '--max-per-task', String(rft.perTask), '--out', data, '--json'],
      {
        cwd: dir,
      },
    ),
  );
  const sftArgs = ['sft', '--data', data, '--model', model, '--epochs', String(rft.epochs), '--lr', String(rft.lr)];
  const sftSeconds = await alightIn([...sftArgs, '--batch-size', String(rft.batch), '--seed', '0', '--run', sftRun]);
  const sft = runSteps(dir, sftRun);
  const tuned = await evaluate(python, sft.at(-1)!.checkpoint!, 'sft', true, out);
  const rl = await alightTrain({
    dir,
    run: rlRun,
    init: ['--init-from', sftRun],
    steps: rft.rlSteps,
    lr: settings.lr,
    extra: ['--save-every', '0'],
  });
  const summary = {
    settings: { ...settings, rft },
    wall: (performance.now() - started) / 1000,
    seconds: { record: recordSeconds, sft: sftSeconds, rl: rl.seconds },
    curated: { tasks: curated.tasks, train: curated.train, dropped: curated.dropped },
    sftLoss: sft.map((s) => s.metrics.loss),
    greedy: paired(base, tuned),
    sampled: pairedSampled(base, tuned),
    rlReward: rl.steps.map((s) => s.reward_mean ?? null),
  };
  writeFileSync(join(out, 'summary.json'), `${JSON.stringify(summary, null, 1)}\n`);
  process.stdout.write(`${JSON.stringify(summary, null, 1)}\n`);
});
