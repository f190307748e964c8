import { dirname, join } from 'node:path';
import { applySelection, parseRateRange } from '../src/data/select.js';
import { toSweBenchRow } from '../src/data/task.js';
import { validateTasks } from '../src/data/validate.js';
import { AlightError, ExitCode } from '../src/errors.js';
import { gradeInstance } from '../src/eval/grade/grader.js';
import { withGrader } from '../src/eval/graders/index.js';
import { gradeTask } from '../src/eval/run/inputs.js';
import { renderSelect, renderValidate } from '../src/ui/data-measure-report.js';
import { progressBars } from '../src/ui/progress-bar.js';
import { graderOf, gradingAt, printJson, withInterrupt, withStore } from './shared.js';
import type { SelectFlags, ValidateFlags } from './table/declared-data.js';

/**
 * `alight data validate`: the kept tasks' environments checked with the grader chosen as for `eval grade` (the gold
 * patch must resolve; at the base F2P fails and P2P passes); verdicts stored, `invalid-env` drops derived.
 */
export async function validateCommand(o: ValidateFlags) {
  const { name, options } = graderOf(o);
  if (name === 'swebench') throw officialRefused();
  return withStore(o, (store, config) =>
    withInterrupt((signal) =>
      withGrader(name, options, gradingAt(config.k8s, o.timeout), async (site) => {
        if (site.kind === 'official') throw officialRefused(); // refused above; this narrows the type
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

const officialRefused = () =>
  new AlightError(
    'data validate grades with alight: --grader local|podman|docker|k8s (the official package grades ' +
      'predictions, and an empty one it does not test)',
    ExitCode.usage,
  );

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
