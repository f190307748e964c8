/**
 * Which tasks a step trains on: the task list is shuffled afresh each epoch (seeded), and step s takes the positions
 * s·B … s·B + B − 1 of that endless sequence. A pure function of (tasks, B, step, seed), so a resumed run sees
 * the same data in the same order.
 */
export function tasksForStep<T>(tasks: readonly T[], batchSize: number, step: number, seed: number): T[] {
  const out: T[] = [];
  let epoch = -1;
  let order: number[] = [];
  for (let p = step * batchSize; p < (step + 1) * batchSize; p++) {
    const e = Math.floor(p / tasks.length);
    if (e !== epoch) {
      epoch = e;
      order = permutation(tasks.length, seed * 1_000_003 + e);
    }
    out.push(tasks[order[p % tasks.length]]);
  }
  return out;
}

/** Fisher–Yates with mulberry32: the same (n, seed) always gives the same order. */
export function permutation(n: number, seed: number): number[] {
  let state = seed >>> 0;
  const random = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  return order;
}
