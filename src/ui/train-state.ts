import type { StepMetrics, TrainEvent } from '../train/events.js';

/** What the dashboard shows, folded from the training events (a pure reducer, tested without a terminal). */
export interface TrainState {
  run: string;
  steps: number;
  step: number;
  phase: string;
  stepStarted: number;
  rollouts: { done: number; failed: number; running: number };
  completionTokens: number;
  rewards: number[];
  /** The last finished step and its metrics. */
  last: { step: number; metrics: StepMetrics } | null;
  notes: string[];
}

export function initialTrainState(now = Date.now()): TrainState {
  return {
    run: '',
    steps: 0,
    step: 0,
    phase: 'starting',
    stepStarted: now,
    rollouts: { done: 0, failed: 0, running: 0 },
    completionTokens: 0,
    rewards: [],
    last: null,
    notes: [],
  };
}

export function foldTrain(s: TrainState, e: TrainEvent, now = Date.now()): TrainState {
  switch (e.type) {
    case 'train-started':
      return { ...s, run: e.run, steps: e.steps, step: e.firstStep };
    case 'phase':
      return e.phase === 'rollouts'
        ? {
            ...s,
            step: e.step,
            phase: e.phase,
            stepStarted: now,
            rollouts: { done: 0, failed: 0, running: 0 },
            completionTokens: 0,
          }
        : { ...s, step: e.step, phase: e.phase };
    case 'rollout-start':
      return { ...s, rollouts: { ...s.rollouts, running: s.rollouts.running + 1 } };
    case 'rollout-end':
      return {
        ...s,
        rollouts: {
          done: s.rollouts.done + 1,
          failed: s.rollouts.failed + (e.state === 'failed' ? 1 : 0),
          running: Math.max(0, s.rollouts.running - 1),
        },
      };
    case 'call':
      return { ...s, completionTokens: s.completionTokens + (e.completionTokens ?? 0) };
    case 'step-end':
      return {
        ...s,
        last: { step: e.step, metrics: e.metrics },
        rewards: [...s.rewards, e.metrics.reward_mean ?? 0],
        notes:
          Number(e.metrics.merge_breaks) > 0
            ? [
                ...s.notes,
                `step ${e.step}: ${e.metrics.merge_breaks} merge breaks (alight samples diagnose --run ${s.run})`,
              ].slice(-3)
            : s.notes,
      };
    case 'worker-restart':
      return { ...s, notes: [...s.notes, e.reason].slice(-3) };
    default:
      return s;
  }
}

const bars = '▁▂▃▄▅▆▇█';

/** The values as a one-line chart, scaled to their own range. */
export function sparkline(values: number[], width = 40): string {
  const shown = values.slice(-width);
  if (shown.length === 0) return '';
  const lo = Math.min(...shown);
  const span = Math.max(...shown) - lo || 1;
  return shown.map((v) => bars[Math.min(bars.length - 1, Math.floor(((v - lo) / span) * bars.length))]).join('');
}
