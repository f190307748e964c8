import type { RunSummary } from '../src/store/store.js';
import { table } from '../src/ui/summary.js';
import { printJson, withStore } from './shared.js';

export async function listRuns(opts: { db?: string; json?: boolean }): Promise<RunSummary[]> {
  return withStore(opts, (store) => {
    const runs = store.listRuns();
    if (opts.json) printJson(runs);
    else if (runs.length === 0) process.stdout.write(`no runs in ${store.path}\n`);
    else {
      process.stdout.write(`${table(['run', 'mode', 'created', 'rollouts', 'ok', 'failed', 'calls', 'mean reward'],
        runs.map((r) => [r.name, r.mode, new Date(r.created_at).toISOString().slice(0, 19), r.rollouts, r.succeeded, r.failed,
          r.calls, r.mean_reward === null ? '–' : r.mean_reward.toFixed(3)]))}\n`);
    }
    return runs;
  });
}
