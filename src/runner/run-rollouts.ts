import { setMaxListeners } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Gateway } from '../gateway/server.js';
import { putReward } from '../rewards/index.js';
import { infraFailure, type RolloutMode } from '../rollouts/state.js';
import type { Slots } from '../slots.js';
import type { Store } from '../store/store.js';
import { harnessEnv } from './env.js';
import type { RunListener } from './events.js';
import { GroupDeadlines } from './group-deadline.js';
import { abortReason, type Launcher, localLauncher, type ProcessOutput } from './launcher.js';
import type { Task } from './tasks.js';
import { substitute } from './template.js';

/**
 * One harness run: its task (null: no task file), its arguments, the group its rollout belongs to, and optionally the
 * folder it runs in, variables it adds to the harness's environment, a step that makes its workspace first (a failure
 * there fails the rollout with the reason) and one that runs once the harness (and reward) ended, however it ended.
 */
export interface RolloutJob {
  task: Task | null;
  args: string[];
  groupId: string | null;
  cwd?: string;
  env?: Record<string, string>;
  prepare?: () => void | Promise<void>;
  /** Once the harness (and reward) ended, however it ended; with the rollout it ran as (its log files' name). */
  finish?: (rolloutId: string) => void | Promise<void>;
  /** The container image it runs in, for a launcher that runs containers (eval's instance images on Kubernetes). */
  image?: string;
}

/** A group: `n` rollouts of one task, the command's `{{field}}`s filled from the task. */
export function groupJobs(args: string[], task: Task, n: number, groupId: string): RolloutJob[] {
  const filled = args.map((a) => substitute(a, task.data));
  return Array.from({ length: n }, () => ({ task, args: filled, groupId }));
}

/**
 * What every batch of rollouts of one run shares, made once per run (`throughGateway`; train's step context is one):
 * the store, the gateway and launcher the harnesses run through, the run, the stop signal, where events go, and the
 * variables harnesses must not see (the admin and upstream keys).
 */
export interface RunSession {
  store: Store;
  gateway: Gateway;
  run: string;
  signal: AbortSignal;
  onEvent: RunListener;
  /** Where harnesses and reward commands run (default: this machine). */
  launcher?: Launcher;
  withhold: string[];
}

/** One batch of rollouts: how its harnesses run. */
export interface RolloutBatch {
  mode: RolloutMode;
  command: string;
  /** Per harness; null: none (a lone interactive harness). */
  timeoutMs: number | null;
  rewardCmd?: string;
  concurrency: number;
  /** A limit shared with other runs of rollouts going on at the same time (async groups), besides `concurrency`. */
  slots?: Slots;
  /** Per-rollout stdout/stderr files go here; null: the terminal. */
  logDir: string | null;
  /** Send a lone harness's stdout to stderr, so that ours carries only JSON. */
  harnessStdoutToStderr?: boolean;
  /** reward.judge.deadlineS in ms: a group's stragglers are stopped this long after the rest ended (group-deadline.ts). */
  groupDeadlineMs?: number;
}

type RolloutsOptions = RunSession & RolloutBatch;

/**
 * Runs the jobs' harnesses through the gateway, `concurrency` at a time, each as a rollout that ends succeeded or
 * failed with a reason. Ctrl-C (the signal) and an error that is not a rollout's (say the store fails) stop them all.
 * Returns the rollout ids in job order.
 */
export async function runRollouts(session: RunSession, batch: RolloutBatch, jobs: RolloutJob[]): Promise<string[]> {
  const options: RolloutsOptions = { ...session, ...batch };
  const stop = new AbortController();
  // Every running rollout listens on it (its harness, its reward command), each removing its listener when done:
  // more than Node's default of 10 is the design at --concurrency > 10, not a leak to warn about.
  setMaxListeners(Math.max(10, 4 * options.concurrency), stop.signal);
  const stopAll = (): void => stop.abort(options.signal.reason);
  options.signal.addEventListener('abort', stopAll, { once: true });
  const ids: string[] = [];
  const deadlines = options.groupDeadlineMs ? new GroupDeadlines(options.groupDeadlineMs, jobs, stop.signal) : null;
  try {
    await inPool(
      jobs.map((job, i) => ({ job, i })),
      options.concurrency,
      async ({ job, i }) => {
        await options.slots?.acquire();
        try {
          const signal = deadlines?.start(job.groupId) ?? stop.signal;
          ids[i] = await runRollout({ ...options, signal }, job).finally(() => deadlines?.end(job.groupId));
        } finally {
          options.slots?.release();
        }
      },
      stopAll,
    );
  } finally {
    options.signal.removeEventListener('abort', stopAll);
  }
  return ids;
}

/**
 * One job's rollout; a failure that was the infrastructure's (a Kubernetes image pull, an eviction) is kept as a failed
 * rollout marked as such and the job runs again as a new rollout, up to the launcher's `infraRetries`. Returns the id
 * of the last rollout.
 */
async function runRollout(options: RolloutsOptions, job: RolloutJob): Promise<string> {
  const retries = launcherOf(options).infraRetries ?? 0;
  for (let attempt = 0; ; attempt++) {
    const { id, infra } = await runAttempt(options, job, attempt < retries);
    if (!infra) return id;
  }
}

type End = (state: 'succeeded' | 'failed', error: string | null, exitCode?: number | null) => string;

async function runAttempt(options: RolloutsOptions, job: RolloutJob, retryable: boolean) {
  const { store, gateway, run, mode, signal, onEvent } = options;
  const taskId = job.task?.id ?? null;
  const { rollout, token } = gateway.rollouts.create({ run, taskId, groupId: job.groupId, mode, task: job.task?.data });
  const end: End = (state, error, exitCode = null) => {
    gateway.rollouts.transition(rollout.id, state, { exitCode, error });
    onEvent({
      type: 'rollout-end',
      rolloutId: rollout.id,
      taskId,
      state,
      error,
      reward: store.lastReward(rollout.id)?.value ?? null,
    });
    return rollout.id;
  };
  if (signal.aborted) return { id: end('failed', abortReason(signal)), infra: false };

  gateway.rollouts.transition(rollout.id, 'running');
  onEvent({ type: 'rollout-start', rolloutId: rollout.id, taskId });
  try {
    const result = await runPrepared(options, job, rollout.id, token, end);
    if (result.infra)
      return { id: end('failed', infraFailure(result.reason ?? 'unknown'), result.exitCode), infra: retryable };
    return { id: rollout.id, infra: false };
  } finally {
    await job.finish?.(rollout.id);
  }
}

const launcherOf = (options: RolloutsOptions): Launcher => options.launcher ?? localLauncher;

async function runPrepared(
  options: RolloutsOptions,
  job: RolloutJob,
  rolloutId: string,
  token: string,
  end: End,
): Promise<{ infra: boolean; reason: string | null; exitCode: number | null }> {
  const { store, gateway, run, mode, signal, logDir } = options;
  const done = (state: 'succeeded' | 'failed', error: string | null, exitCode: number | null = null) => {
    end(state, error, exitCode);
    return { infra: false, reason: error, exitCode };
  };
  try {
    await job.prepare?.();
  } catch (err) {
    return done('failed', `could not prepare the workspace: ${(err as Error).message}`);
  }
  const taskId = job.task?.id ?? null;
  const task = job.task?.data ?? null;
  const env = { ...harnessEnv({ gatewayUrl: gateway.url, token, rolloutId, run, taskId, mode, task }), ...job.env };
  const output: ProcessOutput = logDir
    ? { stdout: join(logDir, `${rolloutId}.stdout.log`), stderr: join(logDir, `${rolloutId}.stderr.log`) }
    : options.harnessStdoutToStderr
      ? 'stdout-to-stderr'
      : 'inherit';
  const result = await launcherOf(options).run({
    command: options.command,
    args: job.args,
    env,
    withhold: options.withhold,
    output,
    timeoutMs: options.timeoutMs,
    signal,
    cwd: job.cwd,
    image: job.image,
    rewardCmd: options.rewardCmd,
    rollout: { id: rolloutId, run, taskId, task },
  });
  if (result.infra) return { infra: true, reason: result.reason, exitCode: result.exitCode };
  if (result.reward?.value != null) putReward(store, rolloutId, 'reward-cmd', result.reward.value, null);
  else if (result.reward) store.addEvent(rolloutId, 'reward-missing', { problem: result.reward.problem });
  if (result.reason !== null) return done('failed', result.reason, result.exitCode);
  if (result.exitCode !== 0) {
    const tail = typeof output === 'string' ? '' : stderrTail(output.stderr);
    return done('failed', `exited with code ${result.exitCode}${tail ? `: ${tail}` : ''}`, result.exitCode);
  }
  return done('succeeded', null, 0);
}

function stderrTail(path: string): string {
  try {
    const lines = readFileSync(path, 'utf8').trim().split('\n');
    return lines[lines.length - 1].slice(0, 300);
  } catch {
    return '';
  }
}

/**
 * Runs `work` over `items`, `concurrency` at a time; the first failure stops the others (through `onError`) and is
 * thrown.
 */
async function inPool<T>(
  items: T[],
  concurrency: number,
  work: (item: T) => Promise<void>,
  onError: () => void,
): Promise<void> {
  let next = 0;
  let failure = null as { error: unknown } | null;
  const worker = async (): Promise<void> => {
    while (next < items.length && !failure) {
      try {
        await work(items[next++]);
      } catch (error) {
        failure ??= { error };
        onError();
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  if (failure) throw failure.error;
}
