import type { RunListing, TrainStepRow } from '../store/store.js';
import { plotSvg } from './plot.js';
import { table } from './summary.js';

/** `alight runs list`: one line per run with its rollouts' counts and mean reward. */
export function renderRunList(runs: RunListing[]): string {
  return `${table(
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
  )}\n`;
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

const value = (s: TrainStepRow, key: string): number | null =>
  typeof s.metrics[key] === 'number' ? (s.metrics[key] as number) : null;

/** `alight runs show`: a training run's metrics per step, and where its plot went when one was asked for. */
export function renderRunSteps(steps: TrainStepRow[], plot: string | null): string {
  const f = (v: number | null): string => (v === null ? '–' : Number.isInteger(v) ? String(v) : v.toPrecision(4));
  return `${table(
    ['step', ...shown],
    steps.map((s) => [s.step, ...shown.map((k) => f(value(s, k)))]),
  )}\n${plot ? `plot: ${plot}\n` : ''}`;
}

/** `alight runs show --plot`: reward, loss and entropy per step, as SVG. */
export const renderRunPlot = (run: string, steps: TrainStepRow[]): string =>
  plotSvg(
    `alight run ${run}`,
    steps.map((s) => s.step),
    ['reward_mean', 'loss', 'entropy'].map((name) => ({ name, values: steps.map((s) => value(s, name)) })),
  );
