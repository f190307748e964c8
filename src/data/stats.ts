import type { Store } from '../store/store.js';

export interface Distribution {
  min: number;
  p50: number;
  p90: number;
  max: number;
  mean: number;
}

function distribution(values: number[]): Distribution | null {
  if (values.length === 0) return null;
  const s = Float64Array.from(values).sort();
  const at = (q: number): number => s[Math.min(s.length - 1, Math.floor(q * s.length))];
  return { min: s[0], p50: at(0.5), p90: at(0.9), max: s[s.length - 1], mean: s.reduce((a, x) => a + x, 0) / s.length };
}

/**
 * `alight data stats`: counts per source, repo and rule, validation verdicts and probe runs, and the shape of what is
 * kept.
 */
export function dataStats(store: Store) {
  const counts = store.data.counts();
  const kept = store.data.keptNumbers();
  return {
    ...counts,
    validations: store.measures.verdictCounts(),
    probes: store.measures.probeRuns(),
    distributions: {
      patch_lines: distribution(kept.n_lines),
      files_changed: distribution(kept.n_files),
      tests: distribution(kept.n_f2p.map((n, i) => n + kept.n_p2p[i])),
      fail_to_pass: distribution(kept.n_f2p),
      statement_words: distribution(kept.ps_words),
    },
  };
}
export type DataStats = ReturnType<typeof dataStats>;
