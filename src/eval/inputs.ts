import { AlightError, ExitCode } from '../errors.js';
import { readAllRows } from '../data/read.js';
import type { Prediction } from './grade-run.js';
import type { GradeTask } from './local-grader.js';
import type { ParserName } from './log-parsers.js';

const list = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : typeof v === 'string' ? (JSON.parse(v) as string[]) : []);

/** Tasks for grading from a SWE-bench-style file (the columns grading reads; the test command from the row if it has one). */
export async function readGradeTasks(path: string): Promise<GradeTask[]> {
  return (await readAllRows(path)).map(gradeTask);
}

export function gradeTask(r: Record<string, unknown>): GradeTask {
  const install = (r.install_config ?? {}) as Record<string, unknown>;
  return {
    instance_id: String(r.instance_id), repo: String(r.repo), base_commit: String(r.base_commit), test_patch: String(r.test_patch ?? ''),
    FAIL_TO_PASS: list(r.FAIL_TO_PASS), PASS_TO_PASS: list(r.PASS_TO_PASS),
    test_cmd: typeof r.test_cmd === 'string' ? r.test_cmd : typeof install.test_cmd === 'string' ? install.test_cmd : undefined,
    log_parser: typeof r.log_parser === 'string' ? r.log_parser as ParserName : undefined,
  };
}

/** Predictions in the official formats: JSONL, a JSON list, or a JSON dict keyed by instance id. */
export async function readPredictions(path: string): Promise<Prediction[]> {
  return (await readAllRows(path)).map((r, i) => {
    if (typeof r.instance_id !== 'string') throw new AlightError(`${path}: prediction ${i + 1} needs instance_id`, ExitCode.input);
    return { instance_id: r.instance_id, model_name_or_path: String(r.model_name_or_path ?? ''), model_patch: typeof r.model_patch === 'string' ? r.model_patch : null };
  });
}
