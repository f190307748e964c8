import { describe, expect, it } from 'vitest';
import { type Probe, servedVerdict } from '../../src/train/served-check.js';

const probe = (version: number, served: number[], trained: number[], tokens = [5, 6, 7]): Probe => ({
  version,
  tokens,
  served,
  trained,
});

describe('the served-policy verdict', () => {
  const v0 = probe(0, [-1, -2, -0.5], [-1, -2, -0.5]);

  it('passes an engine that serves what the trainer holds, and one that moved with it', () => {
    expect(servedVerdict(v0, null, 0.02)).toEqual({
      metrics: { served_logprob_diff: 0, served_moved_ratio: null },
      error: null,
    });
    const v1 = probe(1, [-0.9, -1.9, -0.45], [-0.9001, -1.9, -0.45]);
    const verdict = servedVerdict(v1, v0, 0.02);
    expect(verdict.error).toBeNull();
    expect(verdict.metrics.served_moved_ratio).toBeCloseTo(0.0833 / 0.08337, 2);
  });

  it('names an engine still on the old weights "not synced", however small the update', () => {
    const stale = probe(1, [-1, -2, -0.5], [-0.999, -2.001, -0.5]);
    const verdict = servedVerdict(stale, v0, 0.02);
    expect(verdict.metrics.served_moved_ratio).toBe(0);
    expect(verdict.error).toMatch(/^not synced: after the update to version 1/);
  });

  it('names an engine whose numbers differ from the trainer\'s "synced but different"', () => {
    const other = probe(1, [-0.5, -1, -0.2], [-0.9, -1.9, -0.45]);
    expect(servedVerdict(other, v0, 0.02).error).toMatch(/^synced but different: at version 1 .* by 5\.2e-1/);
  });

  it('compares versions only when the probe chose the same tokens, and skips a step that moved nothing', () => {
    const otherTokens = probe(1, [-1, -2, -0.5], [-1.5, -2, -0.5], [5, 6, 8]);
    expect(servedVerdict(otherTokens, v0, 0.02).metrics.served_moved_ratio).toBeNull();
    expect(servedVerdict(probe(1, [-1, -2, -0.5], [-1, -2, -0.5]), v0, 0.02)).toMatchObject({
      metrics: { served_moved_ratio: null },
      error: null,
    });
  });
});
