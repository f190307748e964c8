import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Config } from '../config/schema.js';
import { startGateway, type Gateway } from '../gateway/server.js';
import type { Store } from '../store/store.js';
import { harnessEnv } from './env.js';
import type { RunListener } from './events.js';
import { runProcess, type ProcessOutput } from './process.js';
import { runRewardCommand } from './reward.js';
import { summariseRun, type RunSummary } from './summary.js';
import type { Task } from './tasks.js';
import { substitute } from './template.js';

export interface RecordOptions {
  store: Store;
  config: Config;
  run: string;
  command: string;
  args: string[];
  /** null: one rollout with the terminal attached. */
  tasks: Task[] | null;
  /** Send a lone harness's stdout to stderr, so that ours carries only JSON. */
  harnessStdoutToStderr?: boolean;
  adminKey: string;
  upstreamApiKey?: string;
  signal: AbortSignal;
  onEvent: RunListener;
}

interface Job { task: Task | null; args: string[] }

/** `alight record`: a gateway, the harness once or per task × n, every call stored; returns the run's summary. */
export async function record(options: RecordOptions): Promise<RunSummary> {
  const { store, config, run, signal, onEvent } = options;
  const started = performance.now();
  const jobs: Job[] = options.tasks
    ? options.tasks.flatMap((task) => {
      const args = options.args.map((a) => substitute(a, task.data));
      return Array.from({ length: config.record.n }, () => ({ task, args }));
    })
    : [{ task: null, args: options.args }];
  const logDir = options.tasks ? join(dirname(store.path), 'runs', run, 'rollouts') : null;
  if (logDir) mkdirSync(logDir, { recursive: true });

  store.ensureRun(run, 'record', { upstream: { ...config.upstream, url: withoutCredentials(config.upstream.url) }, record: config.record });
  const gateway = await startGateway({
    store, gateway: config.gateway, upstream: config.upstream, adminKey: options.adminKey, upstreamApiKey: options.upstreamApiKey,
    onCall: (call) => onEvent({ type: 'call', ...call }),
  });
  onEvent({ type: 'started', run, gatewayUrl: gateway.url, total: jobs.length, logDir });
  const withhold = ['ALIGHT_ADMIN_KEY', ...(config.upstream.apiKeyEnv ? [config.upstream.apiKeyEnv] : [])];
  // Stops every harness on Ctrl-C, and also when one rollout cannot even be set up (say the store fails).
  const stop = new AbortController();
  const stopAll = (): void => stop.abort();
  signal.addEventListener('abort', stopAll, { once: true });
  try {
    await inPool(jobs, options.tasks ? config.record.concurrency : 1, (job) =>
      runRollout({ ...options, signal: stop.signal }, gateway, job, logDir, withhold), stopAll);
  } finally {
    signal.removeEventListener('abort', stopAll);
    if (signal.aborted) onEvent({ type: 'stopping', reason: 'interrupted' });
    await gateway.close();
  }
  return summariseRun(store, run, (performance.now() - started) / 1000, signal.aborted);
}

async function runRollout(options: RecordOptions, gateway: Gateway, job: Job, logDir: string | null, withhold: string[]): Promise<void> {
  const { store, config, run, signal, onEvent } = options;
  const taskId = job.task?.id ?? null;
  const { rollout, token } = gateway.rollouts.create({
    run, taskId, groupId: taskId === null ? null : `${run}/${taskId}`, mode: 'record', task: job.task?.data,
  });
  const end = (state: 'succeeded' | 'failed', error: string | null, exitCode: number | null = null): void => {
    gateway.rollouts.transition(rollout.id, state, { exitCode, error });
    onEvent({ type: 'rollout-end', rolloutId: rollout.id, taskId, state, error, reward: store.lastReward(rollout.id)?.value ?? null });
  };
  if (signal.aborted) return end('failed', 'interrupted');

  gateway.rollouts.transition(rollout.id, 'running');
  onEvent({ type: 'rollout-start', rolloutId: rollout.id, taskId });
  const env = harnessEnv({
    gatewayUrl: gateway.url, token, rolloutId: rollout.id, run, taskId, mode: 'record', task: job.task?.data ?? null, withhold,
  });
  const output: ProcessOutput = logDir
    ? { stdout: join(logDir, `${rollout.id}.stdout.log`), stderr: join(logDir, `${rollout.id}.stderr.log`) }
    : options.harnessStdoutToStderr ? 'stdout-to-stderr' : 'inherit';
  const timeoutMs = job.task ? config.record.timeoutS * 1000 : null;
  const result = await runProcess({ command: options.command, args: job.args, env, output, timeoutMs, signal });

  if (result.reason === null && config.record.rewardCmd) {
    const reward = await runRewardCommand(config.record.rewardCmd, env, output, timeoutMs, signal);
    if (reward.value !== null) store.addReward(rollout.id, reward.value, null, 'reward-cmd');
    else store.addEvent(rollout.id, 'reward-missing', { problem: reward.problem });
  }
  if (result.reason !== null) return end('failed', result.reason, result.exitCode);
  if (result.exitCode !== 0) {
    const tail = typeof output === 'string' ? '' : stderrTail(output.stderr);
    return end('failed', `exited with code ${result.exitCode}${tail ? `: ${tail}` : ''}`, result.exitCode);
  }
  end('succeeded', null, 0);
}

/** A URL may carry `user:password@`: never store that. */
function withoutCredentials(url: string | undefined): string | undefined {
  if (!url) return url;
  const parsed = new URL(url);
  parsed.username = '';
  parsed.password = '';
  return parsed.toString();
}

function stderrTail(path: string): string {
  try {
    const lines = readFileSync(path, 'utf8').trim().split('\n');
    return lines[lines.length - 1].slice(0, 300);
  } catch {
    return '';
  }
}

/** Runs `work` over `items`, `concurrency` at a time; the first failure stops the others (through `onError`) and is thrown. */
async function inPool<T>(items: T[], concurrency: number, work: (item: T) => Promise<void>, onError: () => void): Promise<void> {
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
