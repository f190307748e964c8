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
