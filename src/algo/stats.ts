/** The mean of some numbers; null for none (a step or run without rewards has no mean, not 0). */
export function mean(xs: readonly number[]): number | null {
  return xs.length ? xs.reduce((a, x) => a + x, 0) / xs.length : null;
}

/** The sample standard deviation (n − 1); null for fewer than two numbers. */
export function sampleStd(xs: readonly number[]): number | null {
  const m = mean(xs);
  return m === null || xs.length < 2 ? null : Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1));
}

/** Pearson's correlation of the pairs; null where either side does not vary. */
export function pearson(pairs: readonly (readonly [number, number])[]): number | null {
  const mx = mean(pairs.map((p) => p[0]))!;
  const my = mean(pairs.map((p) => p[1]))!;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (const [x, y] of pairs) {
    sxy += (x - mx) * (y - my);
    sxx += (x - mx) ** 2;
    syy += (y - my) ** 2;
  }
  return sxx === 0 || syy === 0 ? null : sxy / Math.sqrt(sxx * syy);
}
