import type { Store } from '../../store/store.js';
import type { EvalResult } from './swebench-run.js';

/** What `alight data probe` measured: how many tasks were solved how often in k attempts ("2/3": 2 of 3). */
export interface ProbeSummary {
  run: string;
  k: number;
  tasks: number;
  /** "passes/k" → tasks. */
  passCounts: Record<string, number>;
}

/**
 * Each kept task's pass count from a probe's eval, stored with the run that measured it. Only attempts that ran and
 * were graded count: an upstream outage or a grading error is not a failure to solve.
 */
export function storeProbes(store: Store, result: EvalResult, k: number): ProbeSummary {
  const uidOf = new Map([...store.data.eachKeptTask('select')].map((t) => [t.instance_id, t.uid]));
  const counts = new Map<string, { k: number; passes: number }>();
  for (const a of result.attempts) {
    if (a.rollout.state !== 'succeeded' || a.report.status === 'error') continue;
    const c = counts.get(a.instance_id) ?? { k: 0, passes: 0 };
    c.k++;
    if (a.report.status === 'resolved') c.passes++;
    counts.set(a.instance_id, c);
  }
  const probes = [...counts]
    .filter(([id]) => uidOf.has(id))
    .map(([id, c]) => ({ uid: uidOf.get(id)!, run: result.run, ...c }));
  store.measures.setProbes(probes);
  const bands = new Map<string, number>();
  for (const p of probes) bands.set(`${p.passes}/${p.k}`, (bands.get(`${p.passes}/${p.k}`) ?? 0) + 1);
  return { run: result.run, k, tasks: probes.length, passCounts: Object.fromEntries(bands) };
}
