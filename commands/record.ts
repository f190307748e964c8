import { withOverrides } from '../src/config/load.js';
import type { Config } from '../src/config/schema.js';
import { AlightError, ExitCode } from '../src/errors.js';
import { record } from '../src/runner/record.js';
import type { RecordSummary } from '../src/runner/summary.js';
import { readTasks, type Task } from '../src/runner/tasks.js';
import type { Store } from '../src/store/store.js';
import { plainProgress } from '../src/ui/plain-progress.js';
import { renderRecordSummary } from '../src/ui/summary.js';
import {
  defaultRunName,
  newSecret,
  printJson,
  rewardWithFlags,
  withInterrupt,
  withRunner,
  withStore,
  withUpstream,
} from './shared.js';
import type { RecordFlags } from './table/declared.js';

export async function recordCommand(cmd: string, args: string[], flags: RecordFlags): Promise<RecordSummary> {
  return withStore(flags, async (store, fileConfig) => {
    const config = withRunner(
      withOverrides(fileConfig, {
        upstream: { url: flags.upstream, kind: flags.upstreamKind, model: flags.model },
        record: { n: flags.n, concurrency: flags.concurrency, timeoutS: flags.timeout, rewardCmd: flags.rewardCmd },
        reward: rewardWithFlags(fileConfig, flags),
      }),
      flags,
      { port: flags.port },
    );
    const tasks = flags.tasks ? readTasks(flags.tasks) : null;
    return withUpstream(config, flags, (c, upstreamApiKey) =>
      withInterrupt((signal) => recordWith(store, c, cmd, args, tasks, flags, upstreamApiKey, signal)),
    );
  });
}

async function recordWith(
  store: Store,
  config: Config,
  cmd: string,
  args: string[],
  tasks: Task[] | null,
  flags: RecordFlags,
  upstreamApiKey: string | undefined,
  signal: AbortSignal,
): Promise<RecordSummary> {
  // With the terminal handed to a single harness, a live view would garble its output.
  const live =
    tasks && !flags.json && process.stdout.isTTY ? (await import('../src/ui/record-view.js')).liveProgress() : null;
  const plain = live ? null : plainProgress((line) => process.stderr.write(`alight: ${line}\n`), tasks ? 5000 : 60_000);
  const listener = live ?? plain!;
  let summary: RecordSummary;
  try {
    summary = await record({
      store,
      config,
      run: flags.run ?? defaultRunName('rec'),
      command: cmd,
      args,
      tasks,
      harnessStdoutToStderr: flags.json,
      adminKey: process.env.ALIGHT_ADMIN_KEY || newSecret(),
      upstreamApiKey,
      signal,
      onEvent: listener,
    });
  } finally {
    plain?.stop();
    await live?.stop();
  }
  if (flags.json) printJson(summary);
  else process.stdout.write(`${renderRecordSummary(summary)}\n`);
  if (summary.interrupted)
    throw new AlightError(
      `run ${summary.run} interrupted; finished rollouts and calls are stored`,
      ExitCode.interrupted,
    );
  if (summary.rollouts > 0 && summary.failed === summary.rollouts)
    throw new AlightError(`every rollout of run ${summary.run} failed`, ExitCode.failure);
  return summary;
}
