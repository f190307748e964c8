/**
 * Where a training step's wall time goes, and what the pool runner saves: `alight train` on bench:learn's chain-sum
 * recipe (SmolLM2-135M, 8 tasks × 8 rollouts a step through examples/arithmetic/harness.mjs, the openai SDK), the
 * same seed and steps once per runner, one after the other on the same machine. From the store: each step's phases
 * (rollouts, update), and within the rollouts the harnesses' start-up (a rollout's start to its first request at the
 * gateway), generation (first request to last answer) and the tail (last answer to the harness's exit).
 *
 *   npm run bench:steps     # BENCH_STEPS_STEPS (4), BENCH_STEPS_RUNNERS (local,pool), BENCH_STEPS_SEED (0)
 *                           # BENCH_STEPS_EXAMPLE=calculator BENCH_STEPS_MODEL=<bench:agent's warmed-up checkpoint>
 *
 * Prints the table for bench/BENCHMARKS.md and writes bench/learn/results/steps-<example>-<runner>.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runEntry } from '../commands/index.js';
import { AlightError } from '../src/errors.js';
import { ensurePythonEnv } from '../src/setup/python-env.js';
import { Store } from '../src/store/store.js';
import { setupProgress } from '../src/ui/setup-progress.js';
import {
  benchConfig,
  benchModel,
  bin,
  env,
  harnessEnv,
  learnResults,
  median,
  root,
  settings,
  step,
  work,
} from './learn/common.js';

const steps = env('BENCH_STEPS_STEPS', 4);
const seed = env('BENCH_STEPS_SEED', 0);
const runners = (process.env.BENCH_STEPS_RUNNERS ?? 'local,pool').split(',');
const example = (name: string, file: string): string => join(root, 'examples', name, file);
// What each example trains with: bench:learn's chain sums, or bench:agent's calculator agent from its warmed-up model
// (BENCH_STEPS_MODEL: an episode's response is its calls, the tool's results and the answer).
const examples = {
  arithmetic: { maxTokens: settings.maxTokens, env: harnessEnv() },
  calculator: { maxTokens: 160, env: { CALCULATOR_TEMPERATURE: '0.8', CALCULATOR_TOP_P: '0.9' } },
};
const chosen = (process.env.BENCH_STEPS_EXAMPLE ?? 'arithmetic') as keyof typeof examples;

interface StepProfile {
  step: number;
  step_s: number;
  rollouts_s: number;
  update_s: number;
  /** A rollout's start to its first request at the gateway: median and slowest, s. */
  startup_median_s: number;
  startup_max_s: number;
  /** The first request's arrival to the last answer of the step, s. */
  generation_s: number;
  /** The last answer of a rollout to its harness's exit: median, s. */
  tail_median_s: number;
  completion_tokens: number;
}

// A synchronous step names its groups `<run>/step<N>[.<attempt>]/<task>` (src/train/step.ts).
const stepOf = (group: string | null): number | null => {
  const step = group === null ? undefined : /\/step(\d+)/.exec(group)?.[1];
  return step === undefined ? null : Number(step);
};

/** The steps of `run` in `dir`'s store, each with its rollouts' timings. */
function profile(dir: string, run: string): StepProfile[] {
  const store = Store.open(join(dir, '.alight', 'alight.db'));
  try {
    const rollouts = store.rolloutSummaries({ run }).filter((r) => r.started_at !== null && r.ended_at !== null);
    return store.trainSteps(run).map((s) => {
      const m = s.metrics as Record<string, number>;
      const mine = rollouts.filter((r) => stepOf(r.group_id) === s.step);
      const timed = mine.map((r) => ({ r, calls: store.calls.timings(r.id) })).filter((x) => x.calls.length > 0);
      const first = timed.map((x) => x.calls[0].arrivedAt);
      const last = timed.map(({ calls }) => Math.max(...calls.map((c) => c.arrivedAt + c.latencyMs)));
      return {
        step: s.step,
        step_s: m.step_s,
        rollouts_s: m.rollouts_s,
        update_s: m.update_s,
        startup_median_s: median(timed.map((x, i) => first[i] - x.r.started_at!)) / 1000,
        startup_max_s: Math.max(...timed.map((x, i) => first[i] - x.r.started_at!)) / 1000,
        generation_s: (Math.max(...last) - Math.min(...first)) / 1000,
        tail_median_s: median(timed.map((x, i) => x.r.ended_at! - last[i])) / 1000,
        completion_tokens: mine.reduce((n, r) => n + r.completion_tokens, 0),
      };
    });
  } finally {
    store.close();
  }
}

async function train(model: string, runner: string) {
  const dir = join(work, `steps-${chosen}-${runner}`);
  benchConfig(dir, examples[chosen].maxTokens);
  writeFileSync(join(dir, 'alight.config.yaml'), `runner: ${runner}\n`, { flag: 'a' });
  const run = `steps-${runner}-${Date.now()}`;
  const tasks = example(chosen, 'train.jsonl');
  const args = ['train', '--model', model, '--tasks', tasks, '-n', String(settings.group)];
  args.push('--batch-size', String(settings.batchTasks), '--steps', String(steps), '--seed', String(seed));
  args.push('--concurrency', String(settings.batchTasks * settings.group), '--lr', String(settings.lr));
  args.push('--advantage', 'drgrpo', '--loss-norm', 'constant', '--run', run);
  const harness = ['--', 'node', example(chosen, 'harness.mjs')];
  const seconds = await step(process.execPath, [bin, ...args, ...harness], dir, examples[chosen].env);
  return { runner, run, seconds, steps: profile(dir, run) };
}

const fmt = (x: number): string => x.toFixed(1);

await runEntry(async () => {
  const unknown = runners.filter((r) => r !== 'local' && r !== 'pool');
  if (unknown.length) throw new AlightError(`BENCH_STEPS_RUNNERS: no runner ${unknown.join(', ')} (local, pool)`);
  if (!(chosen in examples))
    throw new AlightError(`BENCH_STEPS_EXAMPLE: no example ${chosen} (arithmetic, calculator)`);
  if (chosen === 'calculator' && !process.env.BENCH_STEPS_MODEL)
    throw new AlightError("BENCH_STEPS_EXAMPLE=calculator needs BENCH_STEPS_MODEL: bench:agent's warmed-up checkpoint");
  await ensurePythonEnv(setupProgress(), ['learn']);
  const model = process.env.BENCH_STEPS_MODEL ?? (await benchModel());
  mkdirSync(learnResults, { recursive: true });
  const rows: string[] = [];
  for (const runner of runners) {
    const result = await train(model, runner);
    writeFileSync(join(learnResults, `steps-${chosen}-${runner}.json`), JSON.stringify(result, null, 1));
    // The first step pays for starting what the run keeps (the worker's first batch; the pool's hosts): medians of
    // the later steps, and the first one on its own.
    const later = result.steps.slice(1);
    const col = (k: keyof StepProfile) => `${fmt(median(later.map((s) => s[k])))} (${fmt(result.steps[0][k])})`;
    rows.push(
      `| ${runner} | ${col('step_s')} | ${col('rollouts_s')} | ${col('startup_median_s')} | ${col('startup_max_s')} | ` +
        `${col('generation_s')} | ${col('tail_median_s')} | ${col('update_s')} | ${fmt(result.seconds)} |`,
    );
  }
  process.stdout.write(
    '\n| runner | step s | rollouts s | start-up median s | start-up max s | generation s | tail s | update s | run wall s |\n' +
      `|---|---|---|---|---|---|---|---|---|\n${rows.join('\n')}\n(medians of steps 2–${steps}; step 1 in brackets)\n`,
  );
});
