import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config/schema.js';
import { startGateway } from '../gateway/server.js';
import type { RunListener } from '../runner/events.js';
import { runRollouts } from '../runner/rollouts.js';
import type { RolloutSummary, Store } from '../store/store.js';
import { gradePredictions, type Prediction, type RunSummary } from './grade-run.js';
import type { GradeTask, InstanceReport } from './local-grader.js';
import { freshWorkspace, repoSource, workspaceDiff } from './workspace.js';

export interface EvalTask { grade: GradeTask; row: Record<string, unknown> }

export interface EvalOptions {
  store: Store; config: Config; run: string; command: string; args: string[]; tasks: EvalTask[]; k: number; workers: number;
  reposDir: string; timeoutMs: number; gradeTimeoutMs: number; allowTestEdits: boolean; out: string; adminKey: string;
  signal: AbortSignal; onEvent: RunListener;
}

export interface AttemptResult { instance_id: string; attempt: number; rollout: RolloutSummary; report: InstanceReport; seconds: number | null }
export interface EvalResult { run: string; out: string; summary: RunSummary; attempts: AttemptResult[] }

/**
 * `alight eval swebench`: each instance × k runs the harness in a fresh workspace at its base commit (no history)
 * through the recording gateway (mode val); the workspace's diff is the prediction; the local grader grades it in
 * another fresh workspace (never the agent's). Writes predictions.jsonl, per-attempt reports and summary.json.
 */
export async function evalSwebench(o: EvalOptions): Promise<EvalResult> {
  const { store, run } = o;
  mkdirSync(o.out, { recursive: true });
  store.ensureRun(run, 'val', { eval: { k: o.k, repos: o.reposDir } });
  const gateway = await startGateway({ store, gateway: o.config.gateway, upstream: o.config.upstream, adminKey: o.adminKey,
    onCall: (call) => o.onEvent({ type: 'call', ...call }) });
  const workspaces = join(o.out, 'workspaces');
  const jobs = o.tasks.flatMap((t) => Array.from({ length: o.k }, (_, attempt) => {
    const cwd = join(workspaces, `${t.grade.instance_id}.${attempt}`);
    return { task: { id: t.grade.instance_id, data: t.row }, args: o.args, groupId: `${run}/${t.grade.instance_id}`, cwd,
      prepare: () => { rmSync(cwd, { recursive: true, force: true }); freshWorkspace(repoSource(o.reposDir, t.grade.repo), t.grade.base_commit, cwd); } };
  }));
  o.onEvent({ type: 'started', run, gatewayUrl: gateway.url, total: jobs.length, logDir: join(o.out, 'logs') });
  mkdirSync(join(o.out, 'logs'), { recursive: true });
  let ids: string[];
  try {
    ids = await runRollouts({ store, gateway, run, mode: 'val', command: o.command, timeoutMs: o.timeoutMs, concurrency: o.workers,
      logDir: join(o.out, 'logs'), withhold: ['ALIGHT_ADMIN_KEY'], signal: o.signal, onEvent: o.onEvent }, jobs);
  } finally {
    await gateway.close();
  }
  const rollouts = new Map(store.rolloutSummaries({ ids }).map((r) => [r.id, r]));
  const attempts = jobs.map((job, i) => {
    const rollout = rollouts.get(ids[i])!;
    let patch: string | null = null;
    try { patch = workspaceDiff(job.cwd); } catch { /* never prepared: no prediction */ }
    return { job, rollout, attempt: i % o.k, prediction: { instance_id: job.task.id, model_name_or_path: run, model_patch: patch } as Prediction };
  });
  writeFileSync(join(o.out, 'predictions.jsonl'), attempts.filter((a) => a.attempt === 0).map((a) => JSON.stringify(a.prediction)).join('\n') + '\n');

  const results: AttemptResult[] = [];
  let summary: RunSummary | null = null;
  for (let attempt = 0; attempt < o.k; attempt++) {
    const these = attempts.filter((a) => a.attempt === attempt);
    // A harness that failed (crashed, timed out, could not start) made no prediction: graded as an error with its reason.
    const graded = await gradePredictions(o.tasks.map((t) => t.grade), these.map((a) => a.prediction),
      { reposDir: o.reposDir, timeoutMs: o.gradeTimeoutMs, allowTestEdits: o.allowTestEdits, out: join(o.out, o.k > 1 ? `attempt-${attempt}` : 'reports'), workers: o.workers });
    for (const a of these) {
      let report = graded.reports.find((r) => r.instance_id === a.job.task.id)!;
      if (a.rollout.state !== 'succeeded') report = { ...report, status: 'error', resolved: false, error: `the harness ${a.rollout.error ?? 'failed'}` };
      const seconds = a.rollout.started_at && a.rollout.ended_at ? (a.rollout.ended_at - a.rollout.started_at) / 1000 : null;
      results.push({ instance_id: a.job.task.id, attempt, rollout: a.rollout, report, seconds });
    }
    if (attempt === 0) summary = recount(graded.summary, results.filter((r) => r.attempt === 0).map((r) => r.report));
  }
  writeFileSync(join(o.out, 'summary.json'), `${JSON.stringify(summary, null, 2)}\n`);
  rmSync(workspaces, { recursive: true, force: true });
  return { run, out: o.out, summary: summary!, attempts: results };
}

/** The summary's counts after harness failures turned some reports into errors. */
function recount(base: RunSummary, reports: InstanceReport[]): RunSummary {
  const ids = (s: InstanceReport['status']) => reports.filter((r) => r.status === s).map((r) => r.instance_id).sort();
  return { ...base, resolved_ids: ids('resolved'), unresolved_ids: ids('unresolved'), empty_patch_ids: ids('empty_patch'), error_ids: ids('error'),
    resolved_instances: ids('resolved').length, unresolved_instances: ids('unresolved').length, empty_patch_instances: ids('empty_patch').length,
    error_instances: ids('error').length, completed_ids: [...ids('resolved'), ...ids('unresolved')].sort(),
    completed_instances: ids('resolved').length + ids('unresolved').length };
}

/** pass@k per instance (Chen et al.'s unbiased estimator with n attempts, c correct), averaged. */
export function passAtK(correctPerInstance: number[], n: number, k: number): number {
  if (correctPerInstance.length === 0) return 0;
  const one = (c: number): number => {
    if (n - c < k) return 1;
    let p = 1;
    for (let i = n - c + 1; i <= n; i++) p *= 1 - k / i;
    return 1 - p;
  };
  return correctPerInstance.reduce((a, c) => a + one(c), 0) / correctPerInstance.length;
}
