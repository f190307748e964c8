import type { CallEvent } from '../gateway/model-call.js';

/** What `record` (and later `train` and `eval`) report while they run; `src/ui/` renders these. */
export type RunEvent =
  | { type: 'started'; run: string; gatewayUrl: string; total: number; logDir: string | null }
  | { type: 'rollout-start'; rolloutId: string; taskId: string | null }
  | {
      type: 'rollout-end';
      rolloutId: string;
      taskId: string | null;
      state: 'succeeded' | 'failed';
      error: string | null;
      reward: number | null;
    }
  | ({ type: 'call' } & CallEvent)
  | { type: 'stopping'; reason: string }
  /** Something the user should know that is not a rollout's (the Kubernetes runner reaped orphaned Jobs, a watch dropped). */
  | { type: 'notice'; message: string };

export type RunListener = (event: RunEvent) => void;
