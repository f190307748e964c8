/**
 * The orchestrator's own cost per training step, at B = 64 tasks × n = 8 rollouts.
 *
 * 1. On recorded multi-turn traces (512 rollouts × 10 turns, contexts growing to 8k tokens, recorded straight into
 *    SQLite): the work between the last harness and the update — the step's rollouts, the batch (merge, advantages,
 *    loss weights, writing the file) and the step's row in the store — timed in-process, best of 3.
 * 2. A real `alight train` step at the same B and n on the tiny model with the vowels example harness (two turns,
 *    512 harness processes a step): the step's wall time less the harness phase and the worker's calls (update,
 *    sync, save) is what the orchestrator spent, and its share of the step.
 *
 *   npm run bench:train        # ~3 min on 2 cores
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { configSchema } from '../src/config/schema.js';
import { ensurePythonEnv, PYTHON_DIR } from '../src/setup/python-env.js';
import { Store } from '../src/store/store.js';
import { prepareBatch } from '../src/train/step.js';
import { setupProgress } from '../src/ui/setup-progress.js';
import { tempDir } from '../test/helpers/gateway.js';
import { recordAgentRun } from './recorded-run.js';

const B = 64;
const N = 8;
const STEPS = Number(process.env.TRAIN_BENCH_STEPS ?? 2);
const root = join(import.meta.dirname, '..');
const dir = tempDir('alight-bench-train-');

// 1. recorded traces
const db = join(dir, 'recorded.db');
const ids = recordAgentRun(db, { rollouts: B * N, turns: 10, observation: 600, answer: 200, groups: B });
const config = configSchema.parse({}).train;
const store = Store.open(db);
const times: number[] = [];
let tokens = 0;
for (let i = 0; i < 3; i++) {
  const started = performance.now();
  const { built, rewards } = await prepareBatch(store, ids, config, join(dir, `batch-${i}.safetensors`), i);
  store.putTrainStep('bench', i, { ...built.metrics, reward_mean: rewards.length }, null);
  times.push((performance.now() - started) / 1000);
  tokens = built.metrics.tokens;
}
store.close();
const best = Math.min(...times);

// 2. a real run
const python = await ensurePythonEnv(setupProgress());
execFileSync(python, ['-m', 'alight_worker.tiny', '--out', join(dir, 'model')], { cwd: PYTHON_DIR, stdio: 'ignore' });
execFileSync(
  process.execPath,
  [
    join(root, 'bin', 'alight.js'),
    'train',
    '--model',
    'model',
    '--tasks',
    join(root, 'examples/vowels/tasks.jsonl'),
    '-n',
    String(N),
    '--batch-size',
    String(B),
    '--steps',
    String(STEPS),
    '--save-every',
    '0',
    '--run',
    'bench',
    '--json',
    '--',
    'node',
    join(root, 'examples/vowels/harness.mjs'),
  ],
  { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, ALIGHT_DB: join(dir, 'run.db') } },
);
const run = Store.open(join(dir, 'run.db'));
const steps = run.trainSteps('bench').map((s) => s.metrics as Record<string, number>);
run.close();

console.log(`## alight train step benchmark — ${new Date().toISOString().slice(0, 10)}\n`);
console.log(`B = ${B} tasks × n = ${N} rollouts.\n`);
console.log(
  `1. recorded traces (512 rollouts × 10 turns, ${(tokens / 1e6).toFixed(1)}M tokens ` +
    "in the batch): the orchestrator's work between the last harness and the update took " +
    `${best.toFixed(2)} s (best of 3; ${times.map((t) => t.toFixed(2)).join(', ')}).\n`,
);
console.log('2. real steps (tiny model, vowels harness):\n');
console.log('| step | step s | harnesses s | worker s (update + sync + save) | orchestrator s | orchestrator share |');
console.log('|--:|--:|--:|--:|--:|--:|');
steps.forEach((m, i) => {
  const worker = m.update_s + m.sync_s + (m.save_s ?? 0);
  const own = m.step_s - m.rollouts_s - worker;
  console.log(
    `| ${i} | ${m.step_s.toFixed(2)} | ${m.rollouts_s.toFixed(2)} | ` +
      `${worker.toFixed(2)} | ${own.toFixed(3)} | ${((own / m.step_s) * 100).toFixed(2)}% |`,
  );
});
