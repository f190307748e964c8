import type { Store } from '../store/store.js';

export interface Distribution { min: number; p50: number; p90: number; max: number; mean: number }

function distribution(values: number[]): Distribution | null {
  if (values.length === 0) return null;
  const s = [...values].sort((a, b) => a - b);
  const at = (q: number): number => s[Math.min(s.length - 1, Math.floor(q * s.length))];
  return { min: s[0], p50: at(0.5), p90: at(0.9), max: s[s.length - 1], mean: s.reduce((a, x) => a + x, 0) / s.length };
}

/** `alight data stats`: counts per source, repo and rule, and the shape of what is kept. */
export function dataStats(store: Store) {
  const counts = store.data.counts();
  const kept = store.data.keptFacts();
  return {
    ...counts,
    distributions: {
      patch_lines: distribution(kept.map((t) => t.n_lines)),
      files_changed: distribution(kept.map((t) => t.n_files)),
      tests: distribution(kept.map((t) => t.n_f2p + t.n_p2p)),
      fail_to_pass: distribution(kept.map((t) => t.n_f2p)),
      statement_words: distribution(kept.map((t) => t.ps_words)),
    },
  };
}
export type DataStats = ReturnType<typeof dataStats>;
