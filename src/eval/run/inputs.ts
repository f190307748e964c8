import { readAllRows } from '../../data/read.js';
import { AlightError, ExitCode } from '../../errors.js';
import { instanceImage } from '../grade/container.js';
import type { GradeTask, Prediction } from '../grade/grade-types.js';
import { parserNamed, parsers } from '../grade/log-parsers.js';

const list = (v: unknown): string[] =>
  Array.isArray(v) ? v.map(String) : typeof v === 'string' ? (JSON.parse(v) as string[]) : [];

/**
 * Tasks for grading from a SWE-bench-style file (the columns grading reads; the test command from the row if it has
 * one).
 */
export async function readGradeTasks(path: string, imageTemplate?: string): Promise<GradeTask[]> {
  return (await readAllRows(path)).map((r) => gradeTask(r, imageTemplate));
}

const text = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);

/** A row's grading columns; its image from the row or the template (SWE-bench's names by default). */
export function gradeTask(r: Record<string, unknown>, imageTemplate?: string): GradeTask {
  const install = (
    typeof r.install_config === 'string' ? JSON.parse(r.install_config) : (r.install_config ?? {})
  ) as Record<string, unknown>;
  const parser = text(r.log_parser) ?? text(install.log_parser);
  const log_parser = parser === undefined ? undefined : parserNamed(parser);
  if (parser !== undefined && log_parser === undefined) {
    throw new AlightError(
      `instance ${String(r.instance_id)}: log parser ${parser} is not one alight has ` +
        `(${Object.keys(parsers).join(', ')}, or the official parse_log_* names for Python)`,
      ExitCode.input,
    );
  }
  return {
    instance_id: String(r.instance_id),
    repo: String(r.repo),
    base_commit: String(r.base_commit),
    test_patch: String(r.test_patch ?? ''),
    FAIL_TO_PASS: list(r.FAIL_TO_PASS),
    PASS_TO_PASS: list(r.PASS_TO_PASS),
    version: r.version == null ? undefined : String(r.version),
    test_cmd: text(r.test_cmd) ?? text(install.test_cmd),
    log_parser,
    eval_script: text(r.eval_script),
    image: instanceImage(r, imageTemplate),
  };
}

/** Predictions in the official formats: JSONL, a JSON list, or a JSON dict keyed by instance id. */
export async function readPredictions(path: string): Promise<Prediction[]> {
  // A prediction without a usable id is graded as an error of its own (its id shown as given), not a refused run.
  return (await readAllRows(path)).map((r) => ({
    instance_id: typeof r.instance_id === 'string' ? r.instance_id : JSON.stringify(r.instance_id ?? null),
    model_name_or_path: String(r.model_name_or_path ?? ''),
    model_patch: typeof r.model_patch === 'string' ? r.model_patch : null,
  }));
}
