import { AlightError, ExitCode } from '../src/errors.js';
import { withOverrides } from '../src/config/load.js';
import type { UpstreamKind } from '../src/config/schema.js';
import { record } from '../src/runner/record.js';
import { startManagedServe } from '../src/serve/managed.js';
import type { RunSummary } from '../src/runner/summary.js';
import { readTasks, type Task } from '../src/runner/tasks.js';
import type { Config } from '../src/config/schema.js';
import type { Store } from '../src/store/store.js';
import { plainProgress } from '../src/ui/plain-progress.js';
import { renderRunSummary } from '../src/ui/summary.js';
import { newSecret, printJson, withStore } from './shared.js';

export interface RecordFlags {
  upstream?: string; upstreamKind?: UpstreamKind; model?: string; run?: string; tasks?: string; n?: number;
  concurrency?: number; timeout?: number; rewardCmd?: string; port?: number; db?: string; config?: string; json?: boolean;
  serve?: string;
}

export function defaultRunName(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `rec-${stamp}-${newSecret().slice(0, 4).toLowerCase()}`;
}

export async function recordCommand(cmd: string, args: string[], flags: RecordFlags): Promise<RunSummary> {
  if (flags.serve && flags.upstream) throw new AlightError('pass --serve or --upstream, not both', ExitCode.usage);
  return withStore(flags, async (store, fileConfig) => {
    let config = withOverrides(fileConfig, {
      upstream: { url: flags.upstream, kind: flags.upstreamKind, model: flags.model },
      gateway: { port: flags.port },
      record: { n: flags.n, concurrency: flags.concurrency, timeoutS: flags.timeout, rewardCmd: flags.rewardCmd },
    });
    const tasks = flags.tasks ? readTasks(flags.tasks) : null;
    const served = flags.serve ? await startManagedServe(flags.serve) : null;
    try {
      if (served) config = withOverrides(config, { upstream: { url: served.url, kind: 'vllm', model: served.model } });
      return await recordWith(store, config, cmd, args, tasks, flags);
    } finally {
      await served?.stop();
    }
  });
}

async function recordWith(store: Store, config: Config, cmd: string, args: string[], tasks: Task[] | null, flags: RecordFlags): Promise<RunSummary> {
  if (!config.upstream.url) {
    throw new AlightError('no upstream: pass --upstream http://HOST:PORT/v1 or set upstream.url in alight.config.yaml', ExitCode.usage);
  }
  const apiKeyEnv = config.upstream.apiKeyEnv;
  if (apiKeyEnv && !process.env[apiKeyEnv]) throw new AlightError(`upstream.apiKeyEnv names ${apiKeyEnv}, which is not set`, ExitCode.usage);

  const abort = new AbortController();
  // Kept installed: a second Ctrl-C must not kill alight while it stops harnesses (at most a few seconds).
  const onSignal = (): void => abort.abort();
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // With the terminal handed to a single harness, a live view would garble its output.
  const live = tasks && !flags.json && process.stdout.isTTY ? (await import('../src/ui/record-view.js')).liveProgress() : null;
  const plain = live ? null : plainProgress((line) => process.stderr.write(`alight: ${line}\n`), tasks ? 5000 : 60_000);
  const listener = live ?? plain!;
  let summary: RunSummary;
  try {
    summary = await record({
      store, config, run: flags.run ?? defaultRunName(), command: cmd, args, tasks, harnessStdoutToStderr: flags.json,
      adminKey: process.env.ALIGHT_ADMIN_KEY || newSecret(), upstreamApiKey: apiKeyEnv ? process.env[apiKeyEnv] : undefined,
      signal: abort.signal, onEvent: listener,
    });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    plain?.stop();
    await live?.stop();
  }
  if (flags.json) printJson(summary);
  else process.stdout.write(`${renderRunSummary(summary)}\n`);
  if (summary.interrupted) throw new AlightError(`run ${summary.run} interrupted; finished rollouts and calls are stored`, ExitCode.interrupted);
  if (summary.rollouts > 0 && summary.failed === summary.rollouts) throw new AlightError(`every rollout of run ${summary.run} failed`, ExitCode.failure);
  return summary;
}
