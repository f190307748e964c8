import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AlightError, ExitCode } from '../../errors.js';
import type { GradeOptions, GradeTask, InstanceReport, Prediction, ReadyGrader } from '../grade/grade-types.js';
import { gradeInstance, ungraded } from '../grade/grader.js';
import { gradeWithSwebench } from './swebench-grader.js';

/** The run summary in the official harness's shape (schema_version 2): counts and the ids behind each. */
export interface GradeSummary {
  total_instances: number;
  submitted_instances: number;
  completed_instances: number;
  resolved_instances: number;
  unresolved_instances: number;
  empty_patch_instances: number;
  error_instances: number;
  completed_ids: string[];
  incomplete_ids: string[];
  empty_patch_ids: string[];
  submitted_ids: string[];
  resolved_ids: string[];
  unresolved_ids: string[];
  error_ids: string[];
  schema_version: 2;
  /** alight's additions: instances whose prediction touched protected files (flagged, and removed unless allowed). */
  flagged_ids: string[];
}

export type GradeRunOptions = Omit<GradeOptions, 'logFile' | 'site'> & {
  out: string;
  workers: number;
  grader: ReadyGrader;
  /** The run's id: the official package (the `official` grader) files its reports under it. */
  runId: string;
};

/**
 * Grades predictions against tasks, `workers` at a time, writing `<out>/<instance_id>/report.json` and
 * `test_output.txt` and `<out>/summary.json`. A task without a prediction is incomplete; a prediction without a task
 * is an error with that reason. One instance's failure never stops the others.
 */
export async function gradePredictions(
  tasks: GradeTask[],
  predictions: Prediction[],
  o: GradeRunOptions,
): Promise<{ summary: GradeSummary; reports: InstanceReport[] }> {
  const byId = new Map(tasks.map((t) => [t.instance_id, t]));
  const save = (report: InstanceReport): InstanceReport => {
    // Written here, by the grader (never from inside a grade), and atomically: a reader sees the old report or the new.
    const dir = join(o.out, report.instance_id);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'report.json.tmp'), `${JSON.stringify({ [report.instance_id]: report }, null, 2)}\n`);
    renameSync(join(dir, 'report.json.tmp'), join(dir, 'report.json'));
    return report;
  };
  const bad = badIds(predictions.map((p) => p.instance_id));
  // Not saved in a folder (their ids cannot name one): in the summary's error ids, with the reason in the result.
  const reports = [...bad].map(([i, why]) => ungraded(predictions[i].instance_id, predictions[i].model_patch, why));
  const valid = predictions.filter((_, i) => !bad.has(i));
  const known = valid.filter((p) => byId.has(p.instance_id));
  reports.push(
    ...valid
      .filter((p) => !byId.has(p.instance_id))
      .map((p) => save(ungraded(p.instance_id, p.model_patch, 'unknown instance id (not in the tasks)'))),
  );
  const { grader } = o;
  if (grader.kind === 'official') reports.push(...(await gradeWithSwebench(tasks, known, o)).map(save));
  else {
    let next = 0;
    const work = async (): Promise<void> => {
      while (next < known.length) {
        const p = known[next++];
        mkdirSync(join(o.out, p.instance_id), { recursive: true });
        reports.push(
          save(
            await gradeInstance(byId.get(p.instance_id)!, p.model_patch, {
              ...o,
              site: grader,
              logFile: join(o.out, p.instance_id, 'test_output.txt'),
            }),
          ),
        );
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, o.workers) }, work));
  }
  reports.sort((a, b) => a.instance_id.localeCompare(b.instance_id));
  const summary = summarise(
    tasks.map((t) => t.instance_id),
    predictions.map((p) => p.instance_id),
    reports,
  );
  writeFileSync(join(o.out, 'summary.json.tmp'), `${JSON.stringify(summary, null, 2)}\n`);
  renameSync(join(o.out, 'summary.json.tmp'), join(o.out, 'summary.json'));
  return { summary, reports };
}

const maxIdLength = 200;

/**
 * Predictions whose instance id cannot name a folder (not a plain name, or over 200 characters) or repeats an earlier
 * one, by index, with the reason: each is an error of its own, the others are graded.
 */
export function badIds(ids: string[]): Map<number, string> {
  const seen = new Set<string>();
  const bad = new Map<number, string>();
  ids.forEach((id, i) => {
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(id) || id.length > maxIdLength) {
      bad.set(
        i,
        `instance id ${JSON.stringify(id.slice(0, 80))}${id.length > 80 ? '…' : ''} ` +
          `is not a plain name (letters, digits, . _ -, at most ${maxIdLength} characters)`,
      );
    } else if (seen.has(id)) bad.set(i, `instance id ${id} appears twice in the predictions: only the first is graded`);
    seen.add(id);
  });
  return bad;
}

/** Instance ids name folders: only plain names, and each once (for inputs where one bad id must stop the run). */
export function checkIds(ids: string[], what: string): void {
  const bad = badIds(ids);
  if (bad.size) throw new AlightError(`${[...bad.values()][0]} (in the ${what})`, ExitCode.input);
}

/** The official run summary of graded instances (tasks without a prediction are incomplete). */
export function summarise(taskIds: string[], predicted: string[], reports: InstanceReport[]): GradeSummary {
  const ids = (status: InstanceReport['status']) =>
    reports
      .filter((r) => r.status === status)
      .map((r) => r.instance_id)
      .sort();
  const submitted = new Set(predicted);
  const completed = [...ids('resolved'), ...ids('unresolved')].sort();
  return {
    total_instances: taskIds.length,
    submitted_instances: submitted.size,
    completed_instances: completed.length,
    resolved_instances: ids('resolved').length,
    unresolved_instances: ids('unresolved').length,
    empty_patch_instances: ids('empty_patch').length,
    error_instances: ids('error').length,
    completed_ids: completed,
    incomplete_ids: taskIds.filter((id) => !submitted.has(id)),
    empty_patch_ids: ids('empty_patch'),
    submitted_ids: [...submitted].sort(),
    resolved_ids: ids('resolved'),
    unresolved_ids: ids('unresolved'),
    error_ids: ids('error'),
    schema_version: 2,
    flagged_ids: reports
      .filter((r) => r.guard.length)
      .map((r) => r.instance_id)
      .sort(),
  };
}

/** The 95% Wilson score interval of a rate. */
export function wilson(successes: number, n: number, z = 1.96): [number, number] {
  if (n === 0) return [0, 1];
  const p = successes / n;
  const centre = (p + (z * z) / (2 * n)) / (1 + (z * z) / n);
  const half = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / (1 + (z * z) / n);
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}
