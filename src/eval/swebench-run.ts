import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config/schema.js';
import { AlightError, ExitCode } from '../errors.js';
import { startGateway } from '../gateway/server.js';
import { withheldVars } from '../runner/env.js';
import type { RunListener } from '../runner/events.js';
import { abortReason } from '../runner/process.js';
import { runRollouts } from '../runner/rollouts.js';
import type { RolloutSummary, Store } from '../store/store.js';
import { containerWorkspace, hostWorkspace } from './agent-workspace.js';
import type { Runtime } from './container.js';
import { checkIds, gradePredictions, type RunSummary, summarise } from './grade-run.js';
import type { Prediction } from './grader.js';
import { type GradeOptions, type GradeTask, type InstanceReport, ungraded } from './grader.js';

export interface EvalTask {
  grade: GradeTask;
  row: Record<string, unknown>;
}

export interface EvalOptions {
  store: Store;
  config: Config;
  run: string;
  command: string;
  args: string[];
  tasks: EvalTask[];
  k: number;
  workers: number;
  /** Where agents work: folders made from --repos, or (with `runtime`) containers of each instance's image. */
  reposDir?: string;
  runtime?: Runtime;
  timeoutMs: number;
  gradeTimeoutMs: number;
  allowTestEdits: boolean;
  out: string;
  adminKey: string;
  sandbox?: GradeOptions['sandbox'];
  allowFrameworkAccess?: boolean;
  /** The upstream API key (from the variable the config names): sent upstream, never stored or shown to harnesses. */
  upstreamApiKey?: string;
  /** How predictions are graded (see GradeOptions): here, in containers, or by the official package. */
  container?: GradeOptions['container'];
  official?: boolean;
  signal: AbortSignal;
  onEvent: RunListener;
}

export interface AttemptResult {
  instance_id: string;
  attempt: number;
  rollout: RolloutSummary;
  report: InstanceReport;
  seconds: number | null;
}
export interface EvalResult {
  run: string;
  out: string;
  summary: RunSummary;
  attempts: AttemptResult[];
}

/**
 * `alight eval swebench`: each instance × k runs the harness in a fresh workspace at its base commit (no history)
 * through the recording gateway (mode val); the workspace's diff is the prediction; the local grader grades it in
 * another fresh workspace (never the agent's). Each finished attempt is saved as it is graded, so a run interrupted
 * (Ctrl-C) and started again with the same run id redoes only what was not finished. Writes predictions.jsonl,
 * per-attempt reports and summary.json.
 */
export async function evalSwebench(o: EvalOptions): Promise<EvalResult> {
  const { store, run } = o;
  checkIds(
    o.tasks.map((t) => t.grade.instance_id),
    'tasks',
  );
  const savedDir = join(o.out, 'attempts');
  mkdirSync(savedDir, { recursive: true });
  const savedPath = (id: string, attempt: number) => join(savedDir, `${id}.${attempt}.json`);
  store.ensureRun(run, 'val', { eval: { k: o.k, repos: o.reposDir ?? null, runtime: o.runtime ?? null } });
  const workspaces = join(o.out, 'workspaces');
  const pending = o.tasks
    .flatMap((t) => Array.from({ length: o.k }, (_, attempt) => ({ t, attempt })))
    .filter(({ t, attempt }) => !existsSync(savedPath(t.grade.instance_id, attempt)));
  // The agent's diff, taken as its harness ends; its workspace (or container) goes at once.
  const patches = new Map<string, string>();
  const jobs = pending.map(({ t, attempt }) => {
    const key = `${t.grade.instance_id}.${attempt}`;
    const dir = join(workspaces, key);
    const ws = o.runtime
      ? containerWorkspace(
          o.runtime,
          t.grade.image!,
          `alight-agent-${run}-${key}`.replace(/[^A-Za-z0-9_.-]/g, '_'),
          dir,
        )
      : hostWorkspace(o.reposDir!, t.grade.repo, t.grade.base_commit, dir);
    return {
      attempt,
      key,
      task: { id: t.grade.instance_id, data: withoutAnswers(t.row) },
      args: o.args,
      groupId: `${run}/${t.grade.instance_id}`,
      cwd: ws.cwd,
      env: ws.env,
      prepare: ws.prepare,
      finish: async () => {
        try {
          patches.set(key, await ws.diff());
        } catch {
          /* never prepared, or the agent broke it: no prediction */
        }
        await ws.dispose();
      },
    };
  });
  if (jobs.length) {
    const gateway = await startGateway({
      store,
      gateway: o.config.gateway,
      upstream: o.config.upstream,
      adminKey: o.adminKey,
      upstreamApiKey: o.upstreamApiKey,
      onCall: (call) => o.onEvent({ type: 'call', ...call }),
    });
    o.onEvent({ type: 'started', run, gatewayUrl: gateway.url, total: jobs.length, logDir: join(o.out, 'logs') });
    mkdirSync(join(o.out, 'logs'), { recursive: true });
    let ids: string[];
    try {
      ids = await runRollouts(
        {
          store,
          gateway,
          run,
          mode: 'val',
          command: o.command,
          timeoutMs: o.timeoutMs,
          concurrency: o.workers,
          logDir: join(o.out, 'logs'),
          withhold: withheldVars(o.config.upstream),
          signal: o.signal,
          onEvent: o.onEvent,
        },
        jobs,
      );
    } finally {
      await gateway.close();
    }
    const rollouts = new Map(store.rolloutSummaries({ ids }).map((r) => [r.id, r]));
    // An interrupted attempt is not saved: the next run with this run id does it again.
    const finished = jobs
      .map((job, i) => ({ job, rollout: rollouts.get(ids[i])! }))
      .filter(({ rollout }) => !(o.signal.aborted && rollout.error === abortReason(o.signal)));
    for (let attempt = 0; attempt < o.k; attempt++) {
      const these = finished
        .filter(({ job }) => job.attempt === attempt)
        .map(({ job, rollout }) => ({
          job,
          rollout,
          prediction: {
            instance_id: job.task.id,
            model_name_or_path: run,
            model_patch: patches.get(job.key) ?? null,
          } as Prediction,
        }));
      if (these.length === 0) continue;
      // A harness that failed (crashed, timed out, could not start) is an error with its reason, whatever its diff: not
      // graded.
      const ran = these.filter((a) => a.rollout.state === 'succeeded');
      const batch = new Set(ran.map((a) => a.job.task.id));
      const stoppedBefore = o.signal.aborted;
      const graded = ran.length
        ? await gradePredictions(
            o.tasks.filter((t) => batch.has(t.grade.instance_id)).map((t) => t.grade),
            ran.map((a) => a.prediction),
            {
              reposDir: o.reposDir,
              timeoutMs: o.gradeTimeoutMs,
              allowTestEdits: o.allowTestEdits,
              out: join(o.out, `attempt-${attempt}`),
              workers: o.workers,
              sandbox: o.sandbox,
              allowFrameworkAccess: o.allowFrameworkAccess,
              container: o.container,
              official: o.official ? { runId: `${run}-${attempt}` } : undefined,
            },
          )
        : { reports: [] };
      // Ctrl-C during grading kills the tests too: those verdicts are not kept, the next run grades again. (Stopped
      // before, the harnesses that had finished are graded in peace and kept.)
      if (o.signal.aborted && !stoppedBefore) break;
      for (const a of these) {
        const report: InstanceReport =
          a.rollout.state === 'succeeded'
            ? graded.reports.find((r) => r.instance_id === a.job.task.id)!
            : ungraded(a.job.task.id, a.prediction.model_patch, `the harness ${a.rollout.error ?? 'failed'}`);
        const seconds =
          a.rollout.started_at && a.rollout.ended_at ? (a.rollout.ended_at - a.rollout.started_at) / 1000 : null;
        writeFileSync(
          savedPath(a.job.task.id, attempt),
          JSON.stringify({
            instance_id: a.job.task.id,
            attempt,
            rollout_id: a.rollout.id,
            prediction: a.prediction,
            report,
            seconds,
          }),
        );
      }
    }
    rmSync(workspaces, { recursive: true, force: true });
  }
  if (o.signal.aborted)
    throw new AlightError(
      `interrupted: finished attempts are saved; run again with --run-id ${run} to do the rest`,
      ExitCode.interrupted,
    );

  const saved = o.tasks
    .flatMap((t) => Array.from({ length: o.k }, (_, attempt) => savedPath(t.grade.instance_id, attempt)))
    .map(
      (path) =>
        JSON.parse(readFileSync(path, 'utf8')) as {
          instance_id: string;
          attempt: number;
          rollout_id: string;
          prediction: Prediction;
          report: InstanceReport;
          seconds: number | null;
        },
    );
  const rollouts = new Map(store.rolloutSummaries({ ids: saved.map((s) => s.rollout_id) }).map((r) => [r.id, r]));
  const attempts: AttemptResult[] = saved.map((s) => ({
    instance_id: s.instance_id,
    attempt: s.attempt,
    rollout: rollouts.get(s.rollout_id)!,
    report: s.report,
    seconds: s.seconds,
  }));
  const first = saved.filter((s) => s.attempt === 0);
  writeFileSync(join(o.out, 'predictions.jsonl'), `${first.map((s) => JSON.stringify(s.prediction)).join('\n')}\n`);
  const summary = summarise(
    o.tasks.map((t) => t.grade.instance_id),
    first.map((s) => s.instance_id),
    first.map((s) => s.report),
  );
  writeFileSync(join(o.out, 'summary.json'), `${JSON.stringify(summary, null, 2)}\n`);
  return { run, out: o.out, summary, attempts };
}

/**
 * The row the agent sees: not the gold patch, the test patch or the tests that decide (they would give the answer
 * away).
 */
function withoutAnswers(row: Record<string, unknown>): Record<string, unknown> {
  const { patch: _p, test_patch: _t, FAIL_TO_PASS: _f, PASS_TO_PASS: _pp, ...rest } = row;
  return rest;
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
