import { writeFileSync } from 'node:fs';
import { AlightError, ExitCode } from '../src/errors.js';
import type { RunListing, TrainStepRow } from '../src/store/store.js';
import { plotSvg } from '../src/ui/plot.js';
import { table } from '../src/ui/summary.js';
import { printJson, withStore } from './shared.js';

export async function listRuns(opts: { db?: string; json?: boolean }): Promise<RunListing[]> {
  return withStore(opts, (store) => {
    const runs = store.listRuns();
    if (opts.json) printJson(runs);
    else if (runs.length === 0) process.stdout.write(`no runs in ${store.path}\n`);
    else {
      process.stdout.write(
        `${table(
          ['run', 'mode', 'created', 'rollouts', 'ok', 'failed', 'calls', 'mean reward'],
          runs.map((r) => [
            r.name,
            r.mode,
            new Date(r.created_at).toISOString().slice(0, 19),
            r.rollouts,
            r.succeeded,
            r.failed,
            r.calls,
            r.mean_reward === null ? '–' : r.mean_reward.toFixed(3),
          ]),
        )}\n`,
      );
    }
    return runs;
  });
}

const shown = [
  'reward_mean',
  'reward_std',
  'pass_rate',
  'val_reward',
  'loss',
  'grad_norm',
  'kl_rollout',
  'entropy',
  'clip_fraction',
  'rows',
  'loss_tokens',
  'merge_breaks',
  'rollouts_failed',
  'step_s',
] as const;

/** A training run's metrics per step, and a reward / loss plot when asked. */
export async function showRun(
  run: string,
  opts: { db?: string; json?: boolean; plot?: string },
): Promise<{ run: string; steps: TrainStepRow[]; plot: string | null }> {
  if (opts.plot && !opts.plot.endsWith('.svg'))
    throw new AlightError(`--plot writes SVG: name the file *.svg (got ${opts.plot})`, ExitCode.usage);
  return withStore(opts, (store) => {
    if (!store.getRun(run)) throw new AlightError(`no run ${run} in ${store.path} (alight runs list)`, ExitCode.input);
    const steps = store.trainSteps(run);
    if (steps.length === 0)
      throw new AlightError(
        `run ${run} has no training steps (a record run? alight traces list --run ${run})`,
        ExitCode.input,
      );
    const value = (s: TrainStepRow, key: string): number | null =>
      typeof s.metrics[key] === 'number' ? (s.metrics[key] as number) : null;
    if (opts.plot) {
      writeFileSync(
        opts.plot,
        plotSvg(
          `alight run ${run}`,
          steps.map((s) => s.step),
          ['reward_mean', 'loss', 'entropy'].map((name) => ({ name, values: steps.map((s) => value(s, name)) })),
        ),
      );
    }
    const result = { run, steps, plot: opts.plot ?? null };
    if (opts.json) printJson(result);
    else {
      const f = (v: number | null): string => (v === null ? '–' : Number.isInteger(v) ? String(v) : v.toPrecision(4));
      process.stdout.write(
        `${table(
          ['step', ...shown],
          steps.map((s) => [s.step, ...shown.map((k) => f(value(s, k)))]),
        )}\n${opts.plot ? `plot: ${opts.plot}\n` : ''}`,
      );
    }
    return result;
  });
}
