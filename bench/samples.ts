/**
 * Samples benchmark: trace loading + merging + advantages + writing the batch, for 512 rollouts × 40 turns whose
 * contexts grow to ~32k tokens (~16M tokens in the batch), against a straightforward Python implementation of the same
 * algorithm over lists (as Agent Lightning's adapter does), reading the same SQLite file.
 *
 *   npm run bench:samples                  # ~2 min on 2 cores
 *   SAMPLES_BENCH_ROLLOUTS / _TURNS / _PYTHON_ROLLOUTS change the size (512 / 40 / all).
 */
import { execFileSync, fork } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildRunBatch } from '../src/samples/run-samples.js';
import { Store } from '../src/store/store.js';
import { tempDir } from '../test/helpers/gateway.js';
import { recordAgentRun } from './recorded-run.js';

const ROLLOUTS = Number(process.env.SAMPLES_BENCH_ROLLOUTS ?? 512);
const TURNS = Number(process.env.SAMPLES_BENCH_TURNS ?? 40);
// The baseline runs the whole workload: on a 16-rollout subset its cost per rollout is half (4.3 GB of lists at full
// size).
const PYTHON_ROLLOUTS = Number(process.env.SAMPLES_BENCH_PYTHON_ROLLOUTS ?? ROLLOUTS);
const OBSERVATION = 600;
const ANSWER = 200;

if (process.argv[2] === 'build') {
  // The timed part, in a process of its own so that its peak RSS is its own.
  const started = performance.now();
  const store = Store.open(process.argv[3]);
  const result = buildRunBatch(store, {
    run: 'bench',
    level: 'trajectory',
    out: process.argv[4],
    advantage: 'grpo',
    lossNorm: 'per-rollout-mean',
    missingReward: 'zero',
    maxResponseTokens: 1 << 20,
  });
  store.close();
  process.send!({
    ms: performance.now() - started,
    rssMb: process.resourceUsage().maxRSS / 1024,
    tokens: result.metrics.tokens,
    rows: result.metrics.rows,
    timings: result.timings,
  });
} else {
  const dir = tempDir('alight-bench-');
  const db = join(dir, 'alight.db');
  const t0 = performance.now();
  recordAgentRun(db, { rollouts: ROLLOUTS, turns: TURNS, observation: OBSERVATION, answer: ANSWER });
  console.error(
    `generated ${ROLLOUTS} × ${TURNS} calls in ${((performance.now() - t0) / 1000).toFixed(1)} s ` +
      `(${(statSync(db).size / 2 ** 20).toFixed(0)} MB)`,
  );
  const child = fork(fileURLToPath(import.meta.url), ['build', db, join(dir, 'batch.safetensors')], {
    execArgv: ['--import', 'tsx'],
  });
  const ts = await new Promise<{
    ms: number;
    rssMb: number;
    tokens: number;
    rows: number;
    timings: Record<string, number>;
  }>((resolve) => child.once('message', resolve as never));
  const reference = fileURLToPath(new URL('../python/reference/batch_reference.py', import.meta.url));
  const py = JSON.parse(
    execFileSync(
      'python3',
      [
        reference,
        '--db',
        db,
        '--run',
        'bench',
        '--limit',
        String(PYTHON_ROLLOUTS),
        '--timing',
        '--out',
        join(dir, 'python.safetensors'),
      ],
      { encoding: 'utf8', maxBuffer: 1 << 26 },
    ),
  );
  const pyPerRollout = py.seconds / PYTHON_ROLLOUTS;
  const tsPerRollout = ts.ms / 1000 / ROLLOUTS;
  console.log(`## alight samples benchmark — ${new Date().toISOString().slice(0, 10)}\n`);
  console.log(
    `${ROLLOUTS} rollouts × ${TURNS} turns (observation ${OBSERVATION} + answer ${ANSWER} tokens per turn), ` +
      `${ts.rows} rows, ${(ts.tokens / 1e6).toFixed(1)}M tokens in the batch.\n`,
  );
  console.log('| implementation | rollouts | seconds | seconds per rollout | peak RSS MB |');
  console.log('|---|--:|--:|--:|--:|');
  console.log(
    `| alight (load + merge + advantages + write) | ${ROLLOUTS} | ` +
      `${(ts.ms / 1000).toFixed(2)} | ${tsPerRollout.toFixed(4)} | ${ts.rssMb.toFixed(0)} |`,
  );
  console.log(
    `| Python lists (same algorithm, same file, writing its batch too) | ${PYTHON_ROLLOUTS} ` +
      `| ${py.seconds.toFixed(2)} | ${pyPerRollout.toFixed(4)} | ${py.rss_mb.toFixed(0)} |`,
  );
  console.log(
    `\nalight is ${(pyPerRollout / tsPerRollout).toFixed(1)}× the Python baseline per rollout (target ≥ 10×); ` +
      `${(ts.ms / 1000).toFixed(2)} s (target ≤ 3 s), ${ts.rssMb.toFixed(0)} MB (target ≤ 2048).`,
  );
  console.log(
    `alight's phases: ${Object.entries(ts.timings)
      .map(([k, v]) => `${k.replace(/_ms$/, '')} ${(v / 1000).toFixed(2)} s`)
      .join(', ')}.`,
  );
}
