import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { GradeTask, InstanceReport } from '../eval/grade/grade-types.js';
import { statusesFromLog } from '../eval/grade/grading.js';
import { parserForRepo, parsers } from '../eval/grade/log-parsers.js';
import type { Store } from '../store/store.js';
import { reverseDiff } from './patch.js';
import type { DataProgress } from './pipeline.js';
import type { DataTask } from './task.js';

export const verdicts = [
  'valid',
  'gold-unresolved',
  'gold-does-not-apply',
  'f2p-passes-without-fix',
  'p2p-fails-at-base',
  'tests-do-not-run',
  'image-missing',
  'timeout',
  'error',
] as const;
export type Verdict = (typeof verdicts)[number];

/** One grade as validation reads it: the report, and how many test results its log held. */
export interface Graded {
  report: InstanceReport;
  results: number;
}

const listed = (tests: string[]): string => {
  const shown = tests.slice(0, 5).join(', ');
  return tests.length > 5 ? `${shown} and ${tests.length - 5} more` : shown;
};

/**
 * A task's environment judged from its gold patch's grade and the empty patch's (pure): the gold patch must resolve
 * it, and at the base the FAIL_TO_PASS tests must fail and the PASS_TO_PASS tests pass.
 */
export function verdictOf(gold: Graded, base: Graded): { verdict: Verdict; detail: string } {
  for (const g of [gold, base]) {
    const why = g.report.error;
    if (why && /ErrImage|ImagePull|pull failed|has no image|image .*not (found|known)|manifest unknown/i.test(why))
      return { verdict: 'image-missing', detail: why };
    if (why && /timed out|took over|^timeout$/i.test(why)) return { verdict: 'timeout', detail: why };
  }
  if (gold.report.error === 'patch apply failed')
    return { verdict: 'gold-does-not-apply', detail: 'the gold patch does not apply at the base commit' };
  // A grade that failed before its tests (a pod that would not run, a lost connection) says nothing of the task.
  const error = [gold, base].find((x) => x.report.error && !/no test results/.test(x.report.error))?.report.error;
  if (error) return { verdict: 'error', detail: error };
  if (gold.results === 0 || base.results === 0)
    return {
      verdict: 'tests-do-not-run',
      detail: `the test log holds no results (${gold.results === 0 ? 'gold' : 'base'} run)`,
    };
  const g = gold.report.tests_status!;
  if (!gold.report.resolved) {
    const failing = [...g.FAIL_TO_PASS.failure, ...g.PASS_TO_PASS.failure];
    return { verdict: 'gold-unresolved', detail: `failing with the gold patch: ${listed(failing)}` };
  }
  const b = base.report.tests_status!;
  if (b.FAIL_TO_PASS.success.length)
    return { verdict: 'f2p-passes-without-fix', detail: `passing at the base: ${listed(b.FAIL_TO_PASS.success)}` };
  if (b.PASS_TO_PASS.failure.length)
    return { verdict: 'p2p-fails-at-base', detail: `failing at the base: ${listed(b.PASS_TO_PASS.failure)}` };
  return { verdict: 'valid', detail: '' };
}

/** How a prediction is graded here: the grader the command chose, writing its test log to `logFile`. */
export type GradeFn = (task: GradeTask, prediction: string, logFile: string) => Promise<InstanceReport>;

export interface ValidateOptions {
  grade: GradeFn;
  toGradeTask: (t: DataTask) => GradeTask;
  grader: string;
  workers: number;
  /** Validate again what was validated before. */
  force: boolean;
  /** Where each task's two test logs go. */
  logs: string;
  signal?: AbortSignal;
}

const retried = new Set<string>(['error', 'timeout', 'image-missing']);
const conclusive = (verdict: string | undefined): boolean => verdict !== undefined && !retried.has(verdict);

export interface ValidateSummary {
  checked: number;
  validated: number;
  reused: number;
  byVerdict: Record<string, number>;
  dropped: number;
  seconds: number;
  /** Later stages whose verdicts this cleared (a selection): they must run again. */
  cleared: string[];
}

/**
 * `alight data validate`: each task the earlier stages kept, graded with its gold patch (a SWE-smith bug patch
 * reversed) and with none; the verdict stored per task (a measurement: kept across the stages and reused unless
 * `force`), then the stage's drops (`invalid-env`) derived from the verdicts. Ctrl-C stops taking tasks; what was
 * validated is kept and judged.
 */
export async function validateTasks(
  store: Store,
  o: ValidateOptions,
  progress?: DataProgress,
): Promise<ValidateSummary> {
  const tasks = [...store.data.eachKeptTask('validate')];
  // A verdict about the grading, not the task (an error, a timeout, an image that would not pull), is tried again.
  const todo = tasks.filter((t) => o.force || !conclusive(store.measures.validation(t.uid)?.verdict));
  const started = performance.now();
  let next = 0;
  let done = 0;
  const work = async (): Promise<void> => {
    while (next < todo.length && !o.signal?.aborted) {
      const t = todo[next++];
      const t0 = performance.now();
      const judged = await validateOne(t, o);
      store.measures.setValidation({
        uid: t.uid,
        ...judged,
        seconds: (performance.now() - t0) / 1000,
        grader: o.grader,
      });
      progress?.({ stage: 'validate', done: ++done, total: todo.length });
    }
  };
  progress?.({ stage: 'validate', done: 0, total: todo.length });
  await Promise.all(Array.from({ length: Math.max(1, o.workers) }, work));
  const byVerdict: Record<string, number> = {};
  const drops = [];
  for (const t of tasks) {
    const v = store.measures.validation(t.uid);
    if (!v) continue;
    byVerdict[v.verdict] = (byVerdict[v.verdict] ?? 0) + 1;
    if (v.verdict !== 'valid')
      drops.push({ uid: t.uid, rule: 'invalid-env', detail: `${v.verdict}${v.detail ? `: ${v.detail}` : ''}` });
  }
  const cleared = store.data.setStage('validate', drops);
  return {
    checked: tasks.length,
    validated: done,
    reused: tasks.length - todo.length,
    byVerdict,
    dropped: drops.length,
    seconds: (performance.now() - started) / 1000,
    cleared,
  };
}

async function validateOne(t: DataTask, o: ValidateOptions): Promise<{ verdict: Verdict; detail: string }> {
  const task = o.toGradeTask(t);
  const dir = join(o.logs, t.uid.slice(0, 16));
  mkdirSync(dir, { recursive: true });
  const gold = t.patch_kind === 'bug' ? reverseDiff(t.patch) : t.patch;
  const graded = async (prediction: string, name: string): Promise<Graded> => {
    const logFile = join(dir, `${name}.txt`);
    // A grade that fails before its tests writes no log: an earlier run's must not be read as this one's.
    rmSync(logFile, { force: true });
    const report = await o.grade(task, prediction, logFile);
    return { report, results: resultsIn(logFile, task) };
  };
  const [g, b] = [await graded(gold, 'gold'), await graded('', 'base')];
  return verdictOf(g, b);
}

/** How many test results the log holds (none: the tests did not run, or not under this parser). */
function resultsIn(logFile: string, task: GradeTask): number {
  let log: string;
  try {
    log = readFileSync(logFile, 'utf8');
  } catch {
    return 0;
  }
  const parsed = statusesFromLog(log, parsers[task.log_parser ?? parserForRepo(task.repo)]);
  return 'map' in parsed ? parsed.map.size : 0;
}
