/**
 * Paired comparison of two runs over the instances both graded: b = resolved only by A, c = resolved only by B, and
 * the exact (binomial) McNemar test of b vs c: two-sided p = min(1, 2 · P[X ≤ min(b, c)]), X ~ Binomial(b + c, ½).
 */
export function mcnemarExact(b: number, c: number): number {
  const n = b + c;
  if (n === 0) return 1;
  let tail = 0;
  let term = 0.5 ** n; // C(n, 0) / 2^n
  for (let i = 0; i <= Math.min(b, c); i++) {
    tail += term;
    term *= (n - i) / (i + 1);
  }
  return Math.min(1, 2 * tail);
}

/**
 * The exact two-sided sign-flip (permutation) test of paired integer differences, e.g. each task's passes out of k
 * samples after training minus before: under "training changed nothing" each difference is as likely negated, so
 * p = P[|Σ ±|dᵢ|| ≥ |Σ dᵢ|], its distribution built exactly over the reachable sums (no random draws). With 0/1
 * outcomes it is the exact McNemar test above.
 */
export function signFlipExact(differences: number[]): number {
  const sizes = differences.map(Math.abs).filter((d) => d > 0);
  const reach = sizes.reduce((sum, d) => sum + d, 0);
  let odds = new Float64Array(2 * reach + 1); // index reach + s: P[the flipped sum so far is s]
  odds[reach] = 1;
  for (const d of sizes) {
    const next = new Float64Array(odds.length);
    for (let i = 0; i < odds.length; i++) {
      if (odds[i] === 0) continue;
      next[i - d] += odds[i] / 2;
      next[i + d] += odds[i] / 2;
    }
    odds = next;
  }
  const observed = Math.abs(differences.reduce((sum, d) => sum + d, 0));
  let p = 0;
  for (let i = 0; i < odds.length; i++) if (Math.abs(i - reach) >= observed) p += odds[i];
  return Math.min(1, p);
}

export interface Comparison {
  common: number;
  bothResolved: number;
  onlyA: string[];
  onlyB: string[];
  neither: number;
  pValue: number;
}

export function compareRuns(
  a: { submitted_ids: string[]; resolved_ids: string[] },
  b: { submitted_ids: string[]; resolved_ids: string[] },
): Comparison {
  const common = a.submitted_ids.filter((id) => b.submitted_ids.includes(id));
  const ra = new Set(a.resolved_ids);
  const rb = new Set(b.resolved_ids);
  const onlyA = common.filter((id) => ra.has(id) && !rb.has(id));
  const onlyB = common.filter((id) => rb.has(id) && !ra.has(id));
  return {
    common: common.length,
    bothResolved: common.filter((id) => ra.has(id) && rb.has(id)).length,
    onlyA,
    onlyB,
    neither: common.filter((id) => !ra.has(id) && !rb.has(id)).length,
    pValue: mcnemarExact(onlyA.length, onlyB.length),
  };
}
