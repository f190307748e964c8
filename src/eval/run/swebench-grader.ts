import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { run } from '../../process/launch.js';
import { dockerEngine } from '../grade/container.js';
import type { GradeTask, InstanceReport, Prediction } from '../grade/grade-types.js';
import { slippedPastGuard, ungraded } from '../grade/grader.js';
import { guardPatch } from '../grade/guards.js';
import { officialParserName, parserForRepo } from '../grade/log-parsers.js';
import { evalScriptLines } from '../grade/specs.js';

export interface SwebenchGraderOptions {
  out: string;
  workers: number;
  timeoutMs: number;
  allowTestEdits: boolean;
  runId: string;
  python?: string;
}

/**
 * The `swebench` grader: the official package's `run_evaluation` as a managed subprocess (it needs a Docker engine, or
 * podman, and the instance images), on a dataset file alight writes in SWE-bench v5's shape (each row's image, eval
 * script, log parser), with the guarded predictions of known instances (the caller reports unknown ones). Its
 * per-instance report.json files become alight's reports; an instance without one is an error with the harness's
 * reason.
 */
export async function gradeWithSwebench(
  tasks: GradeTask[],
  predictions: Prediction[],
  o: SwebenchGraderOptions,
): Promise<InstanceReport[]> {
  const dir = join(o.out, 'swebench');
  mkdirSync(dir, { recursive: true });
  // Each prediction as alight's grader would take it: guarded, and git's reading of it checked against the guard's.
  const checked: Checked[] = predictions.map((p) => {
    const g = p.model_patch?.trim() ? guardPatch(p.model_patch, o.allowTestEdits) : null;
    if (!g?.patch.trim() || o.allowTestEdits) return { p, g, slipped: null };
    writeFileSync(join(dir, 'check.diff'), g.patch);
    return { p, g, slipped: slippedPastGuard(dir, join(dir, 'check.diff')) };
  });
  const toGrade = checked.filter(({ g, slipped }) => g?.patch.trim() && !slipped);
  writeInputs(dir, toGrade, new Map(tasks.map((t) => [t.instance_id, t])));
  // The official harness answers from an earlier report.json of the same run id: a redone grade must not see one.
  rmSync(join(dir, 'logs', 'run_evaluation', o.runId), { recursive: true, force: true });
  const ran = toGrade.length
    ? await runOfficial(dir, o)
    : { output: 'nothing to grade with the official harness\n', reason: null };
  writeFileSync(join(dir, 'run_evaluation.log'), ran.output);
  return checked.map((c) => reportFor(c, dir, o.runId, ran.reason));
}

/** A prediction with its guard's verdict, and whether git read a path the guard did not see. */
interface Checked {
  p: Prediction;
  g: ReturnType<typeof guardPatch> | null;
  slipped: string | null;
}

// The model name alight's predictions go under: the folder of the official harness's reports.
const model = 'alight';

/** The dataset (SWE-bench v5's shape: image, eval script, log parser per row) and predictions files it reads. */
function writeInputs(dir: string, toGrade: Checked[], byId: Map<string, GradeTask>): void {
  const rows = toGrade.map(({ p }) => {
    const t = byId.get(p.instance_id)!;
    return {
      instance_id: t.instance_id,
      repo: t.repo,
      version: t.version ?? '',
      base_commit: t.base_commit,
      patch: '',
      test_patch: t.test_patch,
      FAIL_TO_PASS: JSON.stringify(t.FAIL_TO_PASS),
      PASS_TO_PASS: JSON.stringify(t.PASS_TO_PASS),
      image: t.image,
      eval_script: ['#!/bin/bash', 'set -uxo pipefail', ...evalScriptLines(t)].join('\n'),
      log_parser: officialParserName(t.log_parser ?? parserForRepo(t.repo)),
      eval_type: 'pass_and_fail',
    };
  });
  const preds = toGrade.map(({ p, g }) => ({
    instance_id: p.instance_id,
    model_name_or_path: model,
    model_patch: g!.patch,
  }));
  const jsonl = (items: object[]): string => items.map((item) => `${JSON.stringify(item)}\n`).join('');
  writeFileSync(join(dir, 'dataset.jsonl'), jsonl(rows));
  writeFileSync(join(dir, 'predictions.jsonl'), jsonl(preds));
}

/** One instance's report: alight's verdict where it decided (empty, all-protected, slipped), else the official one. */
function reportFor({ p, g, slipped }: Checked, dir: string, runId: string, failure: string | null): InstanceReport {
  const base = { ...ungraded(p.instance_id, p.model_patch, slipped), guard: g?.flags ?? [] };
  if (!base.patch_exists) return { ...base, status: 'empty_patch' };
  // Every hunk was a protected file's and is gone: the base tree, which fails FAIL_TO_PASS by the task's definition.
  if (!g!.patch.trim()) return { ...base, status: 'unresolved', patch_successfully_applied: true };
  if (slipped) return base;
  const path = join(dir, 'logs', 'run_evaluation', runId, model, p.instance_id, 'report.json');
  if (!existsSync(path))
    return {
      ...base,
      error:
        'the official harness wrote no report ' +
        `(${failure ?? 'see its instance log'}; ${join(dir, 'run_evaluation.log')})`,
    };
  const official = (
    JSON.parse(readFileSync(path, 'utf8')) as Record<
      string,
      Omit<InstanceReport, 'instance_id' | 'status' | 'error' | 'guard' | 'test_seconds'>
    >
  )[p.instance_id];
  return {
    ...base,
    ...official,
    tests_status: official.tests_status ?? null,
    status: official.resolved ? 'resolved' : 'unresolved',
  };
}

/**
 * Runs the official harness on a Docker engine (podman's service where there is no Docker); its output kept (its
 * tail), its failure (a missing package, no Docker) as one line.
 */
async function runOfficial(dir: string, o: SwebenchGraderOptions): Promise<{ output: string; reason: string | null }> {
  const engine = await dockerEngine();
  const args = [
    '-m',
    'swebench.harness.run_evaluation',
    ...['--dataset_name', join(dir, 'dataset.jsonl'), '--predictions_path', join(dir, 'predictions.jsonl')],
    ...['--run_id', o.runId, '--max_workers', String(o.workers), '--timeout', String(Math.ceil(o.timeoutMs / 1000))],
    ...['--report_dir', dir],
  ];
  const r = await run({
    command: o.python ?? process.env.ALIGHT_SWEBENCH_PYTHON ?? 'python3',
    args,
    cwd: dir,
    env: { ...process.env, ...engine.env },
    stdout: { tail: 64 << 20 },
    stderr: 'stdout',
  }).finally(engine.stop);
  const output = r.stdout;
  if (r.exitCode === 0) return { output, reason: null };
  if (r.exitCode === null && r.reason?.startsWith('cannot start')) return { output, reason: r.reason };
  const last = output.trim().split('\n').filter(Boolean).pop() ?? '';
  const hint = /No module named .?swebench/.test(output)
    ? ' (install the official package: pip install swebench, or set ALIGHT_SWEBENCH_PYTHON)'
    : /docker|Docker|connection refused|FileNotFoundError/.test(output)
      ? ' (the official harness needs a running Docker engine)'
      : '';
  return { output, reason: `swebench exited ${r.exitCode ?? r.reason}: ${last.slice(0, 300)}${hint}` };
}
