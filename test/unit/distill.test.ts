import { describe, expect, it } from 'vitest';
import { distillRow } from '../../src/algo/distill.js';

describe('distillRow', () => {
  // A row of 6 tokens at offset 2 of the packed batch: a prompt of 3, then 3 sampled tokens.
  const mask = Uint8Array.from([1, 1, 0, 0, 0, 1, 1, 1]);
  const student = Float32Array.from([-9, -9, 0, 0, 0, -1, -2, -0.5]);
  const teacher = [null, -3, -2, -0.5, -1, -0.25];

  it('adds λ·(teacher − student) on the loss tokens of its row only', () => {
    const advantages = Float32Array.from([7, 7, 0, 0, 0, 0.5, 0.5, 0.5]);
    const s = distillRow(advantages, mask, student, teacher, 2, 2);
    expect([...advantages]).toEqual([7, 7, 0, 0, 0, 0.5 + 2 * 0.5, 0.5 + 2 * 1, 0.5 + 2 * 0.25]);
    expect(s).toEqual({ lossTokens: 3, scored: 3, gap: 1.75 });
  });

  it('λ = 0 measures the gap and leaves every bit as it was', () => {
    const advantages = Float32Array.from([0, -0, 0, 0, 0, -0, 0.1, -0.3]);
    const before = Buffer.from(advantages.buffer).toString('hex');
    expect(distillRow(advantages, mask, student, teacher, 2, 0).gap).toBe(1.75);
    expect(Buffer.from(advantages.buffer).toString('hex')).toBe(before);
  });

  it('a loss token without a teacher log-probability is counted unscored and keeps its advantage', () => {
    const advantages = new Float32Array(8);
    const s = distillRow(advantages, mask, student, [null, -3, -2, -0.5, null, -0.25], 2, 1);
    expect(s).toEqual({ lossTokens: 3, scored: 2, gap: 0.75 });
    expect(advantages[6]).toBe(0);
  });
});
