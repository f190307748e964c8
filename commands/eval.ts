import { join, resolve } from 'node:path';
import { AlightError, ExitCode } from '../src/errors.js';
import { gradePredictions, wilson } from '../src/eval/grade-run.js';
import { readGradeTasks, readPredictions } from '../src/eval/inputs.js';
import { table } from '../src/ui/summary.js';
import { printJson } from './shared.js';

export interface GradeFlags { predictions: string; tasks: string; repos: string; out?: string; workers: number; timeout: number; allowTestEdits?: boolean; json?: boolean }

/** `alight eval grade`: existing predictions graded by the local grader; official report files; a table or the summary as JSON. */
export async function gradeCommand(flags: GradeFlags) {
  const [tasks, predictions] = await Promise.all([readGradeTasks(flags.tasks), readPredictions(flags.predictions)]);
  if (predictions.length === 0) throw new AlightError(`${flags.predictions} has no predictions`, ExitCode.input);
  const out = resolve(flags.out ?? join('.alight', 'eval', `grade-${Date.now()}`));
  const { summary, reports } = await gradePredictions(tasks, predictions, {
    reposDir: resolve(flags.repos), timeoutMs: flags.timeout * 1000, allowTestEdits: Boolean(flags.allowTestEdits), out, workers: flags.workers,
  });
  if (flags.json) printJson(summary);
  else {
    const [lo, hi] = wilson(summary.resolved_instances, summary.submitted_instances);
    process.stdout.write(`${table(['instance', 'status', 'flags', 'detail'], reports.map((r) => [r.instance_id, r.status,
      r.guard.map((g) => `${g.file}${g.removed ? ' (removed)' : ''}`).join(', ') || '–', r.error ?? (r.tests_status
        ? `F2P ${r.tests_status.FAIL_TO_PASS.success.length}/${r.tests_status.FAIL_TO_PASS.success.length + r.tests_status.FAIL_TO_PASS.failure.length}, ` +
          `P2P ${r.tests_status.PASS_TO_PASS.success.length}/${r.tests_status.PASS_TO_PASS.success.length + r.tests_status.PASS_TO_PASS.failure.length}`
        : '–')]))}\n\n` +
      `resolved ${summary.resolved_instances}/${summary.submitted_instances} (${((summary.resolved_instances / summary.submitted_instances) * 100).toFixed(1)}%, ` +
      `95% CI ${(lo * 100).toFixed(1)}–${(hi * 100).toFixed(1)}%); unresolved ${summary.unresolved_instances}, empty ${summary.empty_patch_instances}, ` +
      `error ${summary.error_instances}, incomplete ${summary.incomplete_ids.length}\nreports in ${out}\n`);
  }
  return summary;
}
