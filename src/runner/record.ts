import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Config } from '../config/schema.js';
import { openScoring, scoreRollouts } from '../rewards/index.js';
import type { Store } from '../store/store.js';
import type { RunListener } from './events.js';
import { throughGateway } from './open-launcher.js';
import { groupJobs, type RolloutJob, runRollouts } from './run-rollouts.js';
import { type RecordSummary, summariseRun } from './summary.js';
import type { Task } from './tasks.js';

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

/** `alight record`: a gateway, the harness once or per task × n, every call stored; returns the run's summary. */
export async function record(options: RecordOptions): Promise<RecordSummary> {
  const { store, config, run, signal, onEvent } = options;
  const started = performance.now();
  const since = Date.now();
  const jobs: RolloutJob[] = options.tasks
    ? options.tasks.flatMap((task) => groupJobs(options.args, task, config.record.n, `${run}/${task.id}`))
    : [{ task: null, args: options.args, groupId: null }];
  const logDir = options.tasks ? join(dirname(store.path), 'runs', run, 'rollouts') : null;
  if (logDir) mkdirSync(logDir, { recursive: true });

  store.ensureRun(run, 'record', {
    upstream: { ...config.upstream, url: withoutCredentials(config.upstream.url) },
    record: config.record,
    reward: config.reward,
    runner: config.runner,
    // The pods' variables may hold credentials: their names only.
    ...(config.runner === 'k8s' ? { k8s: { ...config.k8s, env: Object.keys(config.k8s.env) } } : {}),
  });
  const scoring = openScoring({ store, run, reward: config.reward });
  await throughGateway({ ...options, total: jobs.length, logDir }, async (session) => {
    try {
      const ids = await runRollouts(
        session,
        {
          mode: 'record',
          command: options.command,
          timeoutMs: options.tasks ? config.record.timeoutS * 1000 : null,
          rewardCmd: config.record.rewardCmd,
          concurrency: options.tasks ? config.record.concurrency : 1,
          logDir,
          harnessStdoutToStderr: options.harnessStdoutToStderr,
          groupDeadlineMs: scoring.groupDeadlineMs,
        },
        jobs,
      );
      if (!signal.aborted) await scoreRollouts(store, scoring, ids);
    } finally {
      if (signal.aborted) onEvent({ type: 'stopping', reason: 'interrupted' });
    }
  });
  return summariseRun(store, run, {
    since,
    elapsedS: (performance.now() - started) / 1000,
    interrupted: signal.aborted,
  });
}

/** A URL may carry `user:password@`: never store that. */
function withoutCredentials(url: string | undefined): string | undefined {
  if (!url) return url;
  const parsed = new URL(url);
  parsed.username = '';
  parsed.password = '';
  return parsed.toString();
}
