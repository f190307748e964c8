/**
 * Async rollouts against synchronous steps, on the same work: the tiny model, the vowels task with heavy-tailed tool
 * time between turns (bench/fixtures/straggler-harness.mjs), B = 4 tasks × n = 8 a step, 8 steps each way. The
 * synchronous run waits for each step's slowest rollout; the async one keeps 8 groups in flight and trains on the
 * first 4 to finish. Reports wall time per step, trained rollouts per minute, staleness and dropped groups.
 *
 *   npm run bench:async        # ~3 min on 2 cores
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { ensurePythonEnv, PYTHON_DIR } from '../src/setup/python-env.js';
import { Store } from '../src/store/store.js';
import { setupProgress } from '../src/ui/setup-progress.js';
import { tempDir } from '../test/helpers/gateway.js';

const STEPS = Number(process.env.ASYNC_BENCH_STEPS ?? 8);
const root = join(import.meta.dirname, '..');
const dir = tempDir('alight-bench-async-');
const python = await ensurePythonEnv(setupProgress());
execFileSync(python, ['-m', 'alight_worker.tiny', '--out', join(dir, 'model'), '--seed', '0'], {
  cwd: PYTHON_DIR,
  stdio: 'ignore',
});

function run(name: string, extra: string[]) {
  const started = performance.now();
  execFileSync(
    process.execPath,
    [
      join(root, 'bin', 'alight.js'),
      'train',
      '--model',
      join(dir, 'model'),
      '--tasks',
      join(root, 'examples', 'vowels', 'tasks.jsonl'),
      '-n',
      '8',
      '--batch-size',
      '4',
      '--steps',
      String(STEPS),
      '--lr',
      '0.01',
      '--seed',
      '0',
      '--save-every',
      String(STEPS),
      '--concurrency',
      '32',
      '--run',
      name,
      '--json',
      ...extra,
      '--',
      'node',
      join(root, 'bench', 'fixtures', 'straggler-harness.mjs'),
    ],
    { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const seconds = (performance.now() - started) / 1000;
  const store = Store.open(join(dir, '.alight', 'alight.db'));
  const steps = store.trainSteps(name).map((s) => s.metrics as Record<string, number>);
  store.close();
  const sum = (key: string) => steps.reduce((a, m) => a + (m[key] ?? 0), 0);
  return {
    seconds,
    stepSeconds: sum('step_s') / steps.length,
    rolloutsPerMin: (sum('rollouts') / sum('step_s')) * 60,
    rolloutPhase: sum('rollouts_s') / steps.length,
    stalenessMax: Math.max(...steps.map((m) => m.staleness_max ?? 0)),
    dropped: sum('dropped_stale_groups'),
    lastReward: steps.at(-1)!.reward_mean,
  };
}

const sync = run('sync', []);
const asynchronous = run('async', ['--async-groups', '8', '--max-staleness', '2', '--is-correction', 'token']);
const row = (name: string, r: ReturnType<typeof run>) =>
  `| ${name} | ${r.stepSeconds.toFixed(2)} | ${r.rolloutPhase.toFixed(2)} | ` +
  `${r.rolloutsPerMin.toFixed(0)} | ${r.stalenessMax} | ${r.dropped} | ${r.lastReward.toFixed(3)} |`;
console.log(
  [
    '| mode | s / step | waiting for rollouts, s / step | trained rollouts / min ' +
      '| max staleness | stale groups dropped | last reward |',
    '|---|---|---|---|---|---|---|',
    row('sync', sync),
    row('async (8 groups in flight)', asynchronous),
  ].join('\n'),
);
console.log(`\nasync / sync step time: ${(asynchronous.stepSeconds / sync.stepSeconds).toFixed(2)}×`);
