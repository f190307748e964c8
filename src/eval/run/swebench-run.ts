import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../../config/schema.js';
import { AlightError, ExitCode } from '../../errors.js';
import type { RunListener } from '../../runner/events.js';
import { abortReason } from '../../runner/launcher.js';
import { throughGateway } from '../../runner/open-launcher.js';
import { runRollouts } from '../../runner/run-rollouts.js';
import type { RolloutSummary, Store } from '../../store/store.js';
import type { Runtime } from '../grade/container.js';
import type { GradeTask, InstanceReport, Prediction, ReadyGrader } from '../grade/grade-types.js';
import { ungraded } from '../grade/grader.js';
import { containerWorkspace, hostWorkspace, podWorkspace } from './agent-workspace.js';
import { checkIds, type GradeSummary, gradePredictions, summarise } from './grade-run.js';

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
  /**
   * Where agents work: folders made from --repos, or (with `runtime`) containers of each instance's image: podman or
   * docker here (the harness here), or a Kubernetes Job (the harness inside it).
   */
  reposDir?: string;
  runtime?: Runtime | 'k8s';
  timeoutMs: number;
  gradeTimeoutMs: number;
  allowTestEdits: boolean;
  out: string;
  adminKey: string;
  allowFrameworkAccess?: boolean;
  /** The upstream API key (from the variable the config names): sent upstream, never stored or shown to harnesses. */
  upstreamApiKey?: string;
  /** How predictions are graded: here, in containers or pods, or by the official package. */
  grader: ReadyGrader;
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
  summary: GradeSummary;
  attempts: AttemptResult[];
}

/**
 * `alight eval swebench`: each instance × k runs the harness in a fresh workspace at its base commit (no history)
 * through the recording gateway (mode val); the workspace's diff is the prediction; the local grader grades it in
 * another fresh workspace (never the agent's). Each finished attempt is saved as it is graded, so a run interrupted
 * (Ctrl-C) and started again with the same run id redoes only what was not finished. Writes predictions.jsonl,
 * per-attempt reports and summary.json (see AttemptFiles).
 */
export async function evalSwebench(o: EvalOptions): Promise<EvalResult> {
  checkIds(
    o.tasks.map((t) => t.grade.instance_id),
    'tasks',
  );
  const files = attemptFiles(o.out);
  mkdirSync(files.attempts, { recursive: true });
  o.store.ensureRun(o.run, 'val', { eval: { k: o.k, repos: o.reposDir ?? null, runtime: o.runtime ?? null } });
  const pending = o.tasks
    .flatMap((t) => Array.from({ length: o.k }, (_, attempt) => ({ t, attempt })))
    .filter(({ t, attempt }) => !existsSync(files.saved(t.grade.instance_id, attempt)));
  if (pending.length) {
    await gradeAndSave(o, files, await runAgents(o, files, pending));
    rmSync(files.workspaces, { recursive: true, force: true });
  }
  if (o.signal.aborted)
    throw new AlightError(
      `interrupted: finished attempts are saved; run again with --run ${o.run} to do the rest`,
      ExitCode.interrupted,
    );
  return collect(o, files);
}

/**
 * Where a run keeps its attempts' artefacts, all under its out folder: the saved attempts are what a run started again
 * with the same id resumes from.
 */
interface AttemptFiles {
  /** The saved attempts' folder. */
  attempts: string;
  /** An attempt saved as it was graded (its rollout, prediction, report and time). */
  saved(id: string, attempt: number): string;
  /** The agents' workspaces, each removed as its harness ends. */
  workspaces: string;
  /** The harnesses' output. */
  logs: string;
  /** The grader's reports and test output for the attempts numbered `attempt`. */
  grading(attempt: number): string;
  /** The first attempts' predictions (SWE-bench's format) and their run summary. */
  predictions: string;
  summary: string;
}

function attemptFiles(out: string): AttemptFiles {
  const attempts = join(out, 'attempts');
  return {
    attempts,
    saved: (id, attempt) => join(attempts, `${id}.${attempt}.json`),
    workspaces: join(out, 'workspaces'),
    logs: join(out, 'logs'),
    grading: (attempt) => join(out, `attempt-${attempt}`),
    predictions: join(out, 'predictions.jsonl'),
    summary: join(out, 'summary.json'),
  };
}

/** A finished attempt as saved in its file. */
interface SavedAttempt {
  instance_id: string;
  attempt: number;
  rollout_id: string;
  prediction: Prediction;
  report: InstanceReport;
  seconds: number | null;
}

/** An attempt whose harness ended (succeeded or failed by itself): its rollout and the prediction taken from it. */
interface Ran {
  id: string;
  attempt: number;
  rollout: RolloutSummary;
  prediction: Prediction;
}

/**
 * The attempts' harnesses through a recording gateway. An interrupted attempt is left out: it is not saved, and the
 * next run with this run id does it again.
 */
async function runAgents(o: EvalOptions, files: AttemptFiles, pending: Pending[]): Promise<Ran[]> {
  // The agent's diff, taken as its harness ends; its workspace (or container) goes at once.
  const patches = new Map<string, string>();
  const jobs = pending.map((p) => agentJob(o, files, p, patches));
  mkdirSync(files.logs, { recursive: true });
  const config: Config = o.runtime === 'k8s' ? { ...o.config, runner: 'k8s' } : o.config;
  const through = { ...o, config, total: jobs.length, logDir: files.logs };
  const ids = await throughGateway(through, (session) =>
    runRollouts(
      session,
      {
        mode: 'val',
        // In a pod, the harness runs inside the workspace's script (podWorkspace): each job's arguments carry it.
        command: o.runtime === 'k8s' ? 'sh' : o.command,
        timeoutMs: o.timeoutMs,
        concurrency: o.workers,
        logDir: files.logs,
      },
      jobs,
    ),
  );
  const rollouts = new Map(o.store.rolloutSummaries({ ids }).map((r) => [r.id, r]));
  return jobs
    .map((job, i) => ({
      id: job.task.id,
      attempt: job.attempt,
      rollout: rollouts.get(ids[i])!,
      prediction: { instance_id: job.task.id, model_name_or_path: o.run, model_patch: patches.get(job.key) ?? null },
    }))
    .filter(({ rollout }) => !(o.signal.aborted && rollout.error === abortReason(o.signal)));
}

type Pending = { t: EvalTask; attempt: number };

/**
 * An attempt's harness, in a workspace of its own: a folder from --repos, a container of the instance's image, or a
 * pod of it.
 */
function agentJob(o: EvalOptions, files: AttemptFiles, { t, attempt }: Pending, patches: Map<string, string>) {
  const key = `${t.grade.instance_id}.${attempt}`;
  const dir = join(files.workspaces, key);
  const pod = o.runtime === 'k8s' ? podWorkspace(files.logs) : null;
  const ws =
    pod ??
    (o.runtime && o.runtime !== 'k8s'
      ? containerWorkspace(
          o.runtime,
          t.grade.image!,
          `alight-agent-${o.run}-${key}`.replace(/[^A-Za-z0-9_.-]/g, '_'),
          dir,
        )
      : hostWorkspace(o.reposDir!, t.grade.repo, t.grade.base_commit, dir));
  return {
    attempt,
    key,
    task: { id: t.grade.instance_id, data: withoutAnswers(t.row) },
    args: pod ? pod.wrap(o.command, o.args) : o.args,
    groupId: `${o.run}/${t.grade.instance_id}`,
    cwd: pod ? undefined : ws.cwd,
    image: pod ? t.grade.image : undefined,
    env: ws.env,
    prepare: ws.prepare,
    finish: async (rolloutId: string) => {
      try {
        patches.set(key, await ws.diff(rolloutId));
      } catch {
        /* never prepared, or the agent broke it: no prediction */
      }
      await ws.dispose();
    },
  };
}

/**
 * Grades the first attempts together, then the second, …, saving each attempt as it is graded. Ctrl-C during grading
 * kills the tests too: those verdicts are not kept, nor are later attempts graded; the next run grades them. (Stopped
 * before, the harnesses that had finished are graded in peace and kept.)
 */
async function gradeAndSave(o: EvalOptions, files: AttemptFiles, ran: Ran[]): Promise<void> {
  for (let attempt = 0; attempt < o.k; attempt++) {
    const these = ran.filter((a) => a.attempt === attempt);
    if (these.length === 0) continue;
    const stoppedBefore = o.signal.aborted;
    const reports = await gradeAttempts(o, files, attempt, these);
    if (o.signal.aborted && !stoppedBefore) break;
    for (const a of these) {
      // A harness that failed (crashed, timed out, could not start) is an error with its reason, whatever its diff.
      const report =
        a.rollout.state === 'succeeded'
          ? reports.find((r) => r.instance_id === a.id)!
          : ungraded(a.id, a.prediction.model_patch, `the harness ${a.rollout.error ?? 'failed'}`);
      const seconds =
        a.rollout.started_at && a.rollout.ended_at ? (a.rollout.ended_at - a.rollout.started_at) / 1000 : null;
      const saved: SavedAttempt = {
        instance_id: a.id,
        attempt,
        rollout_id: a.rollout.id,
        prediction: a.prediction,
        report,
        seconds,
      };
      writeFileSync(files.saved(a.id, attempt), JSON.stringify(saved));
    }
  }
}

/** The reports of the attempts numbered `attempt` whose harness succeeded (the others are not graded). */
async function gradeAttempts(o: EvalOptions, files: AttemptFiles, attempt: number, these: Ran[]) {
  const ran = these.filter((a) => a.rollout.state === 'succeeded');
  if (ran.length === 0) return [];
  const batch = new Set(ran.map((a) => a.id));
  const graded = await gradePredictions(
    o.tasks.filter((t) => batch.has(t.grade.instance_id)).map((t) => t.grade),
    ran.map((a) => a.prediction),
    {
      grader: o.grader,
      runId: `${o.run}-${attempt}`,
      timeoutMs: o.gradeTimeoutMs,
      allowTestEdits: o.allowTestEdits,
      out: files.grading(attempt),
      workers: o.workers,
      allowFrameworkAccess: o.allowFrameworkAccess,
    },
  );
  return graded.reports;
}

/** Every attempt as saved (by this run or an earlier one with its id); the first attempts' predictions and summary. */
function collect(o: EvalOptions, files: AttemptFiles): EvalResult {
  const saved = o.tasks
    .flatMap((t) => Array.from({ length: o.k }, (_, attempt) => files.saved(t.grade.instance_id, attempt)))
    .map((path) => JSON.parse(readFileSync(path, 'utf8')) as SavedAttempt);
  const rollouts = new Map(o.store.rolloutSummaries({ ids: saved.map((s) => s.rollout_id) }).map((r) => [r.id, r]));
  const attempts: AttemptResult[] = saved.map((s) => ({
    instance_id: s.instance_id,
    attempt: s.attempt,
    rollout: rollouts.get(s.rollout_id)!,
    report: s.report,
    seconds: s.seconds,
  }));
  const first = saved.filter((s) => s.attempt === 0);
  writeFileSync(files.predictions, `${first.map((s) => JSON.stringify(s.prediction)).join('\n')}\n`);
  const summary = summarise(
    o.tasks.map((t) => t.grade.instance_id),
    first.map((s) => s.instance_id),
    first.map((s) => s.report),
  );
  writeFileSync(files.summary, `${JSON.stringify(summary, null, 2)}\n`);
  return { run: o.run, out: o.out, summary, attempts };
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
