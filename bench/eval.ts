/**
 * The local grader's throughput and overhead: 100 fixture instances (a real git repository with a pytest suite, gold
 * predictions) graded with --concurrency 1 and 2, sandboxed (bubblewrap, the default) and not; the overhead is the
 * grader's time per instance over the raw test command run alone in a prepared workspace (the same command, the same
 * files), measured in the same run.
 *
 *   npm run bench:eval        # ~3 min on 2 cores
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { defaultMemoryMb, defaultProcesses, ensureSandbox } from '../src/eval/grade/sandbox.js';
import { gradePredictions } from '../src/eval/run/grade-run.js';
import { gradeTask } from '../src/eval/run/inputs.js';
import { tempDir } from '../test/helpers/gateway.js';
import { makeSweRepo } from '../test/helpers/swe-repo.js';
import { rawTestSeconds } from './raw-tests.js';

const N = Number(process.env.EVAL_BENCH_INSTANCES ?? 100);
const root = tempDir('alight-bench-eval-');
const fx = makeSweRepo(root);
const tasks = Array.from({ length: N }, (_, i) => gradeTask({ ...fx.instance, instance_id: `acme__calc-${i + 1}` }));
const predictions = tasks.map((t) => ({
  instance_id: t.instance_id,
  model_name_or_path: 'gold',
  model_patch: fx.instance.patch,
}));

const raw = rawTestSeconds(fx, root);

await ensureSandbox(() => {});
const results: { sandboxed: boolean; workers: number; seconds: number; resolved: number }[] = [];
for (const sandboxed of [true, false]) {
  for (const workers of [1, 2]) {
    const out = join(root, `out-${sandboxed}-${workers}`);
    const started = performance.now();
    const { summary } = await gradePredictions(tasks, predictions, {
      grader: {
        kind: 'host',
        reposDir: fx.repos,
        sandbox: sandboxed ? { memoryMb: defaultMemoryMb, processes: defaultProcesses } : null,
      },
      runId: `bench-${sandboxed}-${workers}`,
      timeoutMs: 600_000,
      allowTestEdits: false,
      out,
      workers,
    });
    results.push({
      sandboxed,
      workers,
      seconds: (performance.now() - started) / 1000,
      resolved: summary.resolved_instances,
    });
  }
}
execFileSync('rm', ['-rf', root]);

console.log(`## alight eval grading benchmark — ${new Date().toISOString().slice(0, 10)}\n`);
console.log(
  `${N} instances (gold predictions) on a real git repository with a ` +
    `pytest suite; the raw test command alone takes ${raw.toFixed(3)} s.\n`,
);
console.log(
  '| sandbox | workers | seconds | instances/min | resolved | seconds ' +
    'per instance | overhead over the raw test command | ÷ unsandboxed |',
);
console.log('|---|--:|--:|--:|--:|--:|--:|--:|');
for (const r of results) {
  const per = r.seconds / N;
  const bare = results.find((b) => !b.sandboxed && b.workers === r.workers)!;
  console.log(
    `| ${r.sandboxed ? 'bubblewrap' : 'none'} | ${r.workers} | ${r.seconds.toFixed(1)} ` +
      `| ${(N / (r.seconds / 60)).toFixed(0)} | ${r.resolved}/${N} | ${per.toFixed(3)} | ` +
      `${r.workers === 1 ? `${(((per - raw) / raw) * 100).toFixed(1)}%` : '–'} ` +
      `| ${(r.seconds / bare.seconds).toFixed(2)}× |`,
  );
}
