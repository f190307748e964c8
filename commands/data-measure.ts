import { dirname, join } from 'node:path';
import { applySelection, parseRateRange } from '../src/data/select.js';
import { toSweBenchRow } from '../src/data/task.js';
import { validateTasks } from '../src/data/validate.js';
import { AlightError, ExitCode } from '../src/errors.js';
import { gradeInstance } from '../src/eval/grade/grader.js';
import { gradeTask } from '../src/eval/run/inputs.js';
import { type ProbeSummary, renderProbe, renderSelect, renderValidate } from '../src/ui/data-measure-report.js';
import { progressBars } from '../src/ui/progress-bar.js';
import { swebenchCommand } from './eval.js';
import { graderFor, withSite } from './grading.js';
import { defaultRunName, printJson, withInterrupt, withStore } from './shared.js';
import type { ProbeFlags, SelectFlags, ValidateFlags } from './table/declared-data.js';

/**
 * `alight data validate`: the kept tasks' environments checked with the grader chosen as for `eval grade` (the gold
 * patch must resolve; at the base F2P fails and P2P passes); verdicts stored, `invalid-env` drops derived.
 */
export async function validateCommand(o: ValidateFlags) {
  const chosen = graderFor(o);
  if (chosen.kind === 'official')
    throw new AlightError(
      'data validate grades with alight: --grader local|podman|docker|k8s (the official package grades ' +
        'predictions, and an empty one it does not test)',
      ExitCode.usage,
    );
  return withStore(o, (store, config) =>
    withInterrupt((signal) =>
      withSite(chosen, { k8s: config.k8s, timeoutS: o.timeout }, async (site) => {
        const progress = progressBars(!o.json && Boolean(process.stderr.isTTY));
        const s = await validateTasks(
          store,
          {
            grade: (task, prediction, logFile) =>
              gradeInstance(task, prediction, {
                site,
                timeoutMs: o.timeout * 1000,
                allowTestEdits: false,
                // The gold patch is the dataset's, not a policy's: code that uses pytest (pytest's own repository)
                // is graded as SWE-bench grades it.
                allowFrameworkAccess: true,
                logFile,
                testEmpty: true,
              }),
            toGradeTask: (t) => gradeTask(toSweBenchRow(t), o.imageTemplate),
            grader: o.grader ?? 'local',
            workers: o.workers,
            force: Boolean(o.force),
            logs: join(dirname(store.path), 'validate'),
            signal,
          },
          progress,
        ).finally(() => progress.stop());
        if (o.json) printJson(s);
        else process.stdout.write(renderValidate(s, signal.aborted));
        return s;
      }),
    ),
  );
}

/**
 * `alight data probe`: the harness k times on each task kept before selection, through eval swebench's machinery
 * (recorded, mode val, graded); each task's pass count stored with the run that measured it. Resumable by --run.
 */
export async function probeCommand(cmd: string, args: string[], flags: ProbeFlags) {
  const run = flags.run ?? defaultRunName('probe');
  return swebenchCommand(cmd, args, { ...flags, run, fromDb: true }, (result, store) => {
    const uidOf = new Map([...store.data.eachKeptTask('select')].map((t) => [t.instance_id, t.uid]));
    // Only attempts that ran and were graded count: an upstream outage or a grading error is not a failure to solve.
    const counts = new Map<string, { k: number; passes: number }>();
    for (const a of result.attempts) {
      if (a.rollout.state !== 'succeeded' || a.report.status === 'error') continue;
      const c = counts.get(a.instance_id) ?? { k: 0, passes: 0 };
      c.k++;
      if (a.report.status === 'resolved') c.passes++;
      counts.set(a.instance_id, c);
    }
    const probes = [...counts]
      .filter(([id]) => uidOf.has(id))
      .map(([id, c]) => ({ uid: uidOf.get(id)!, run: result.run, ...c }));
    store.measures.setProbes(probes);
    const bands = new Map<string, number>();
    for (const p of probes) bands.set(`${p.passes}/${p.k}`, (bands.get(`${p.passes}/${p.k}`) ?? 0) + 1);
    const summary: ProbeSummary = {
      run: result.run,
      k: flags.n,
      tasks: probes.length,
      passCounts: Object.fromEntries(bands),
    };
    if (flags.json) printJson(summary);
    else process.stdout.write(renderProbe(summary));
  });
}

/** `alight data select`: the training set from a probe (see src/data/select.ts); a table per band and repo. */
export async function selectCommand(o: SelectFlags) {
  const rate = parseRateRange(o.solveRate);
  if (!rate)
    throw new AlightError(
      `--solve-rate ${o.solveRate}: write a range of r such as 0<r<1, 0<=r<1 or 0.25<=r<=0.75`,
      ExitCode.usage,
    );
  return withStore(o, (store) => {
    const s = applySelection(store, o.probe, { rate, addUnsolved: o.addUnsolved, val: o.val, seed: o.seed });
    if (o.json) printJson(s);
    else process.stdout.write(renderSelect(s));
    return s;
  });
}
