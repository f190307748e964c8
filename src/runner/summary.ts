import { mean } from '../algo/stats.js';
import type { RolloutSummary, Store } from '../store/store.js';

export interface TaskSummary {
  task_id: string | null;
  rollouts: number;
  succeeded: number;
  failed: number;
  mean_reward: number | null;
  calls: number;
}

export interface RecordSummary {
  run: string;
  db: string;
  /** This invocation's rollouts (a reused --run name adds to the run: `run_rollouts` counts all of them). */
  rollouts: number;
  run_rollouts: number;
  succeeded: number;
  failed: number;
  calls: number;
  error_calls: number;
  prompt_tokens: number;
  completion_tokens: number;
  mean_reward: number | null;
  elapsed_s: number;
  interrupted: boolean;
  tasks: TaskSummary[];
  failures: { rollout_id: string; task_id: string | null; error: string | null }[];
}

function rewards(rows: RolloutSummary[]): number[] {
  return rows.map((r) => r.reward).filter((v): v is number => v !== null);
}

/** The rollouts of `run` made since `since` (ms): one invocation's, however many the run already held. */
export function summariseRun(
  store: Store,
  run: string,
  o: { since: number; elapsedS: number; interrupted: boolean },
): RecordSummary {
  const all = store.rolloutSummaries({ run });
  const rows = all.filter((r) => r.created_at >= o.since);
  const { elapsedS, interrupted } = o;
  const byTask = new Map<string | null, RolloutSummary[]>();
  for (const r of rows) {
    const list = byTask.get(r.task_id);
    if (list) list.push(r);
    else byTask.set(r.task_id, [r]);
  }
  const sum = (f: (r: RolloutSummary) => number): number => rows.reduce((a, r) => a + f(r), 0);
  return {
    run,
    db: store.path,
    rollouts: rows.length,
    run_rollouts: all.length,
    succeeded: rows.filter((r) => r.state === 'succeeded').length,
    failed: rows.filter((r) => r.state === 'failed').length,
    calls: sum((r) => r.calls),
    error_calls: sum((r) => r.error_calls),
    prompt_tokens: sum((r) => r.prompt_tokens),
    completion_tokens: sum((r) => r.completion_tokens),
    mean_reward: mean(rewards(rows)),
    elapsed_s: Math.round(elapsedS * 10) / 10,
    interrupted,
    tasks: [...byTask].map(([task_id, rs]) => ({
      task_id,
      rollouts: rs.length,
      succeeded: rs.filter((r) => r.state === 'succeeded').length,
      failed: rs.filter((r) => r.state === 'failed').length,
      mean_reward: mean(rewards(rs)),
      calls: rs.reduce((a, r) => a + r.calls, 0),
    })),
    failures: rows
      .filter((r) => r.state === 'failed')
      .map((r) => ({ rollout_id: r.id, task_id: r.task_id, error: r.error })),
  };
}
