/**
 * Does a real model get better at an agentic task through alight? SmolLM2-135M-Instruct (Apache-2.0, from its GGUF on
 * PyPI) as an OpenAI Agents SDK agent with a calculator tool (examples/calculator/): reasoning-gym's products of two
 * 3-4 digit numbers, several turns (a call, the tool's result, the answer), every turn through alight's gateway.
 *
 *   1. The model gets a chat template with a tools branch (examples/calculator/chat_template.jinja: SmolLM2's own
 *      ChatML, Hermes-style calls); with it the base model makes no tool call at all (bench/BENCHMARKS.md).
 *   2. Warm-up: a scripted teacher (bench/agent/teacher.ts, a program: no model that calls tools is reachable here)
 *      drives the same harness on another task (chain sums); the student is fine-tuned on those episodes rendered with
 *      its own template for BENCH_AGENT_WARMUP examples only, so that it makes calls now and then and RL has room.
 *   3. RL through the harness (`alight train`, Dr. GRPO, the tool results masked out of the loss), then the held-out
 *      tasks through the same harness, greedy and sampled, warmed-up model against trained (bench:learn's table).
 *
 *   4. TRL's GRPOTrainer with the same tool in process, from the same warmed-up model on the same budget, evaluated
 *      through the same harness (bench/peers/trl_grpo.py --task calculator).
 *
 *   npm run bench:agent     # BENCH_AGENT_STEPS (4), BENCH_AGENT_LR (1e-5), BENCH_AGENT_WARMUP (48)
 *                           # BENCH_AGENT_HELDOUT (200), BENCH_AGENT_SAMPLES (2), BENCH_AGENT_SEED (0)
 *                           # BENCH_AGENT_SIDES (alight,trl)
 *
 * Writes ~/.cache/alight/bench-agent/ and bench/agent/results/summary.json; prints the table for BENCHMARKS.md.
 */
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { runEntry } from '../commands/index.js';
import { AlightError } from '../src/errors.js';
import { ensurePythonEnv } from '../src/setup/python-env.js';
import { setupProgress } from '../src/ui/setup-progress.js';
import { type AgentEvaluation, calculatorHarness, evaluateAgent } from './agent/evaluate.js';
import { startTeacher } from './agent/teacher.js';
import { benchConfig, benchModel, bin, env, root, runSteps, step } from './learn/common.js';
import { type Evaluation, report, type Side } from './learn/report.js';

const settings = {
  steps: env('BENCH_AGENT_STEPS', 4),
  lr: env('BENCH_AGENT_LR', 1e-5),
  warmup: env('BENCH_AGENT_WARMUP', 48),
  heldOut: env('BENCH_AGENT_HELDOUT', 200),
  samples: env('BENCH_AGENT_SAMPLES', 2),
  seed: env('BENCH_AGENT_SEED', 0),
  batchTasks: 8,
  group: 8,
  // Below 1 and 1: at the warmed-up model's temperature 1, a call is rarely well formed and most groups carry no signal.
  temperature: 0.8,
  topP: 0.9,
  // A training row's response is the whole episode after its first prompt: calls, tool results and the answer.
  episodeTokens: 160,
};
const work = join(homedir(), '.cache', 'alight', 'bench-agent');
const results = join(root, 'bench', 'agent', 'results');
const example = (file: string): string => join(root, 'examples', 'calculator', file);
const harness = calculatorHarness(root);

/** The first `n` lines of a task file, written to `dir`; their ids. */
function firstTasks(file: string, n: number, out: string): string[] {
  const lines = readFileSync(file, 'utf8').trim().split('\n').slice(0, n);
  writeFileSync(out, `${lines.join('\n')}\n`);
  return lines.map((l) => JSON.parse(l).id as string);
}

/** SmolLM2 with the calculator example's template (transformers reads chat_template.jinja from the folder). */
async function toolModel(): Promise<string> {
  const model = join(work, 'model');
  if (!existsSync(join(model, 'config.json'))) cpSync(await benchModel(), model, { recursive: true });
  cpSync(example('chat_template.jinja'), join(model, 'chat_template.jinja'));
  return model;
}

/** The teacher's episodes on the warm-up tasks through the harness, rendered for the student, then SFT on them. */
async function warmUp(model: string): Promise<string> {
  const dir = join(work, 'warmup');
  benchConfig(dir);
  const tasks = join(dir, 'tasks.jsonl');
  firstTasks(example('warmup.jsonl'), settings.warmup, tasks);
  const teacher = await startTeacher();
  const run = `teacher-${Date.now()}`;
  try {
    const rec = ['record', '--upstream', teacher.url, '--upstream-kind', 'openai-compatible', '--tasks', tasks];
    await step(process.execPath, [bin, ...rec, '--concurrency', '16', '--run', run, '--', 'node', harness], dir);
  } finally {
    teacher.server.close();
  }
  const data = join(dir, `sft-${run}`);
  const curate = ['samples', 'curate', '--run', run, '--render', model, '--min-reward', '1', '--out', data];
  await step(process.execPath, [bin, ...curate], dir);
  const sft = ['sft', '--data', data, '--model', model, '--epochs', '1', '--batch-size', String(settings.batchTasks)];
  await step(
    process.execPath,
    [bin, ...sft, '--lr', '1e-5', '--seed', String(settings.seed), '--run', `warm-${run}`],
    dir,
  );
  return join(
    dir,
    '.alight',
    'runs',
    `warm-${run}`,
    'checkpoints',
    `step-${settings.warmup / settings.batchTasks - 1}`,
  );
}

/** Greedy and sampled pass@1 of `folder` on the held-out tasks, as one Evaluation (bench:learn's shape). */
async function evaluate(folder: string, name: string, taskFile: string, ids: string[]) {
  const dir = join(work, 'eval');
  mkdirSync(dir, { recursive: true });
  const common = { bin, harness, folder, tasks: taskFile, taskIds: ids, dir, step };
  const stamp = Date.now();
  const greedy = await evaluateAgent({
    ...common,
    run: `${name}-greedy-${stamp}`,
    samples: 1,
    sampling: { temperature: 0, topP: 1 },
  });
  const sampled = await evaluateAgent({
    ...common,
    run: `${name}-sampled-${stamp}`,
    samples: settings.samples,
    sampling: { temperature: settings.temperature, topP: settings.topP },
  });
  const both: Evaluation & { turns: Turns } = {
    ...greedy,
    sampled_pass_rate: sampled.sampled_pass_rate,
    sampled_per_task: sampled.sampled_per_task,
    seconds: greedy.seconds + sampled.seconds,
    turns: { greedy: greedy.turns, sampled: sampled.turns },
  };
  writeFileSync(join(results, `eval-${name}.json`), JSON.stringify(both, null, 2));
  return both;
}

async function alightSide(from: string, heldOut: string, ids: string[]): Promise<AgentSide> {
  const dir = join(work, 'rl');
  // bench:learn's settings, but a row's response is the whole episode after its first prompt (the call, the tool's
  // result, the answer: ~60 tokens), which bench:learn's 48 would cut before the answer.
  benchConfig(dir, settings.episodeTokens);
  const run = `agent-${Date.now()}`;
  const args = ['train', '--model', from, '--tasks', example('train.jsonl'), '-n', String(settings.group)];
  args.push('--batch-size', String(settings.batchTasks), '--steps', String(settings.steps));
  args.push('--concurrency', String(settings.batchTasks * settings.group), '--lr', String(settings.lr));
  args.push('--seed', String(settings.seed), '--advantage', 'drgrpo', '--loss-norm', 'constant', '--run', run);
  const seconds = await step(process.execPath, [bin, ...args, '--', 'node', harness], dir, {
    CALCULATOR_TEMPERATURE: String(settings.temperature),
    CALCULATOR_TOP_P: String(settings.topP),
  });
  const steps = runSteps(dir, run);
  const last = join(dir, '.alight', 'runs', run, 'checkpoints', `step-${settings.steps - 1}`);
  const trained = await evaluate(last, 'alight', heldOut, ids);
  return {
    name: 'alight',
    trainSeconds: seconds,
    trainReward: steps.map((s) => s.metrics.reward_mean ?? null),
    evals: [{ step: settings.steps, evaluation: trained }],
    extra: { run },
    turns: trained.turns,
  };
}

/**
 * TRL's GRPOTrainer with the same tool in process (bench/peers/trl_grpo.py --task calculator: the harness's prompt and
 * tool list, calculator.mjs's results, the tool's tokens masked), from the same warmed-up model, tasks in the same
 * order, objective, sampling, episode budget and CPU; evaluated through the harness like alight's.
 */
async function trlSide(from: string, heldOut: string, ids: string[]): Promise<AgentSide> {
  await step('bash', [join(root, 'bench/peers/setup-trl.sh')]);
  const dir = join(work, 'trl');
  const python = join(homedir(), '.cache', 'alight', 'trl', 'bin', 'python');
  const args = [join(root, 'bench/peers/trl_grpo.py'), '--task', 'calculator', '--model', from, '--out', dir];
  args.push('--steps', String(settings.steps), '--lr', String(settings.lr), '--seed', String(settings.seed));
  args.push('--batch-tasks', String(settings.batchTasks), '--group', String(settings.group), '--threads', '2');
  args.push('--objective', 'drgrpo', '--temperature', String(settings.temperature), '--top-p', String(settings.topP));
  args.push('--max-tokens', String(settings.episodeTokens), '--mask-truncated');
  const seconds = await step(python, args);
  const result = JSON.parse(readFileSync(join(dir, 'trl-result.json'), 'utf8'));
  const trained = await evaluate(join(dir, `step-${settings.steps}`), 'trl', heldOut, ids);
  return {
    name: 'TRL',
    trainSeconds: seconds,
    trainReward: result.train_reward_mean ?? [],
    evals: [{ step: settings.steps, evaluation: trained }],
    extra: result,
    turns: trained.turns,
  };
}

type Turns = { greedy: AgentEvaluation['turns']; sampled: AgentEvaluation['turns'] };
type AgentSide = Side & { turns: Turns };
const trainers = { alight: alightSide, trl: trlSide } satisfies Record<string, typeof alightSide>;
const chosen = (process.env.BENCH_AGENT_SIDES ?? 'alight,trl').split(',') as (keyof typeof trainers)[];

await runEntry(async () => {
  const unknown = chosen.filter((name) => !(name in trainers));
  if (unknown.length)
    throw new AlightError(`BENCH_AGENT_SIDES: no trainer ${unknown.join(', ')} (${Object.keys(trainers).join(', ')})`);
  const started = performance.now();
  mkdirSync(results, { recursive: true });
  await ensurePythonEnv(setupProgress(), ['learn']);
  const model = await toolModel();
  const warmed = await warmUp(model);
  const heldOut = join(work, 'heldout.jsonl');
  const ids = firstTasks(example('heldout.jsonl'), settings.heldOut, heldOut);
  const base = await evaluate(warmed, 'warmed-up', heldOut, ids);
  const sides: AgentSide[] = [];
  for (const name of chosen) sides.push(await trainers[name](warmed, heldOut, ids));
  const wall = (performance.now() - started) / 1000;
  const summary = report({ settings, base, sides, wall, out: results });
  const turns = { 'warmed-up': base.turns, ...Object.fromEntries(sides.map((s) => [s.name, s.turns])) };
  process.stdout.write(`\nper episode (greedy, then sampled):\n${JSON.stringify(turns, null, 2)}\n`);
  writeFileSync(join(results, 'summary.json'), JSON.stringify({ ...summary, turns }, null, 2));
});
