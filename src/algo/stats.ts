/** The mean of some numbers; null for none (a step or run without rewards has no mean, not 0). */
export function mean(xs: readonly number[]): number | null {
  return xs.length ? xs.reduce((a, x) => a + x, 0) / xs.length : null;
}

/** The sample standard deviation (n − 1); null for fewer than two numbers. */
export function sampleStd(xs: readonly number[]): number | null {
  const m = mean(xs);
  return m === null || xs.length < 2 ? null : Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1));
}
