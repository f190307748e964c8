/**
 * `alight data validate`'s throughput: N fixture tasks (a real git repository with a pytest suite; each task's gold
 * patch its own) validated with the local grader, sandboxed, with 1 and 2 workers. Each validation is two grades (the
 * gold patch and the empty one); the baseline is the raw test command run twice in a prepared workspace (the same
 * command, the same files), measured in the same run.
 *
 *   npm run bench:validate    # ~2 min on 2 cores
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { importFiles } from '../src/data/pipeline.js';
import { toSweBenchRow } from '../src/data/task.js';
import { validateTasks } from '../src/data/validate.js';
import { gradeInstance } from '../src/eval/grade/grader.js';
import { defaultMemoryMb, defaultProcesses, ensureSandbox } from '../src/eval/grade/sandbox.js';
import { gradeTask } from '../src/eval/run/inputs.js';
import { Store } from '../src/store/store.js';
import { tempDir } from '../test/helpers/gateway.js';
import { makeSweRepo } from '../test/helpers/swe-repo.js';
import { rawTestSeconds } from './raw-tests.js';

const N = Number(process.env.VALIDATE_BENCH_TASKS ?? 40);
const root = tempDir('alight-bench-validate-');
const fx = makeSweRepo(root);
const note = (n: number): string =>
  `diff --git a/NOTE_${n} b/NOTE_${n}\nnew file mode 100644\n--- /dev/null\n+++ b/NOTE_${n}\n@@ -0,0 +1 @@\n+${n}\n`;
const file = join(root, 'tasks.jsonl');
writeFileSync(
  file,
  Array.from({ length: N }, (_, i) =>
    JSON.stringify({
      ...fx.instance,
      instance_id: `acme__calc-${i + 1}`,
      patch: fx.instance.patch + note(i),
      problem_statement: `task ${i + 1}: add(2, 3) returns -1 instead of 5.`,
    }),
  ).join('\n'),
);

// The raw test command, alone: a validation runs it twice.
const raw = 2 * rawTestSeconds(fx, root);

await ensureSandbox(() => {});
const store = Store.open(join(root, 'alight.db'));
await importFiles(store, [file], { format: 'auto' });
const results: { workers: number; seconds: number; valid: number }[] = [];
for (const workers of [1, 2]) {
  const logs = join(root, `logs-${workers}`);
  const s = await validateTasks(store, {
    grade: (task, prediction, logFile) =>
      gradeInstance(task, prediction, {
        site: {
          kind: 'host',
          reposDir: fx.repos,
          sandbox: { memoryMb: defaultMemoryMb, processes: defaultProcesses },
        },
        timeoutMs: 600_000,
        allowTestEdits: false,
        logFile,
        testEmpty: true,
      }),
    toGradeTask: (t) => gradeTask(toSweBenchRow(t)),
    grader: 'local',
    workers,
    force: true,
    logs,
  });
  results.push({ workers, seconds: s.seconds, valid: s.byVerdict.valid ?? 0 });
}
store.close();
execFileSync('rm', ['-rf', root]);

console.log(`## alight data validate benchmark — ${new Date().toISOString().slice(0, 10)}\n`);
console.log(
  `${N} tasks on a real git repository with a pytest suite, the local grader in bubblewrap; the raw test command ` +
    `twice (what a validation runs) takes ${raw.toFixed(3)} s.\n`,
);
console.log('| workers | seconds | tasks/min | valid | seconds per task | ÷ raw test command twice |');
console.log('|--:|--:|--:|--:|--:|--:|');
for (const r of results) {
  const per = r.seconds / N;
  console.log(
    `| ${r.workers} | ${r.seconds.toFixed(1)} | ${((N / r.seconds) * 60).toFixed(1)} | ${r.valid}/${N} | ` +
      `${per.toFixed(3)} | ${(per / raw).toFixed(2)}× |`,
  );
}
