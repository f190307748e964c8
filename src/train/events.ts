import type { RunEvent } from '../runner/events.js';

/** A step's metrics by name (null: not measured this step). */
export type StepMetrics = Record<string, number | null>;

/** What `alight train` reports as it runs (besides the rollouts' own events); `src/ui/` renders these. */
export type TrainEvent =
  | RunEvent
  | { type: 'train-started'; run: string; firstStep: number; steps: number; gatewayUrl: string; workerLog: string }
  | { type: 'phase'; step: number; phase: string }
  | { type: 'step-end'; step: number; metrics: StepMetrics; checkpoint: string | null }
  | { type: 'worker-restart'; reason: string; fromStep: number }
  | { type: 'log'; message: string };

export type TrainListener = (event: TrainEvent) => void;
