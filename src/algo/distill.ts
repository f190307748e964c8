/**
 * On-policy distillation's per-token signal (Tinker's recipe): on each token the student sampled, the teacher's
 * log-probability of that token minus the student's own, a one-sample estimate of −KL(student ‖ teacher) at that
 * position. Added to the token's advantage, scaled by λ, it pushes the student towards what the teacher would have said,
 * token by token, where a task reward says one thing for the whole answer.
 */

export interface RowSignal {
  /** Loss tokens of the row. */
  lossTokens: number;
  /** Loss tokens the teacher gave a log-probability for. */
  scored: number;
  /** Σ (log p_teacher − log p_student) over the scored tokens. */
  gap: number;
}

/**
 * Adds λ·(teacher[k] − student[at + k]) to `advantages[at + k]` for each loss token k of the row starting at `at`.
 * `teacher[k]` is the teacher's log-probability of the row's token k given the ones before (null: none, as for k = 0).
 * λ = 0 leaves the advantages untouched, bit for bit (the gap is still measured).
 */
export function distillRow(
  advantages: Float32Array,
  mask: Uint8Array,
  student: Float32Array,
  teacher: readonly (number | null)[],
  at: number,
  coef: number,
): RowSignal {
  const signal: RowSignal = { lossTokens: 0, scored: 0, gap: 0 };
  for (let k = 0; k < teacher.length; k++) {
    if (mask[at + k] !== 1) continue;
    signal.lossTokens++;
    const t = teacher[k];
    if (t === null) continue;
    const d = t - student[at + k];
    signal.scored++;
    signal.gap += d;
    if (coef !== 0) advantages[at + k] += coef * d;
  }
  return signal;
}
