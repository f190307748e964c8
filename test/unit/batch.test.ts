import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildBatch, type RolloutRows } from '../../src/samples/batch.js';
import type { Row } from '../../src/samples/merge.js';
import { readSafetensors, writeSafetensors } from '../../src/samples/safetensors.js';
import { tempDir } from '../helpers/gateway.js';

const row = (prompt: number[], completion: number[]): Row => ({
  tokens: Int32Array.from([...prompt, ...completion]),
  mask: Uint8Array.from([...prompt.map(() => 0), ...completion.map(() => 1)]),
  logprobs: Float32Array.from([...prompt.map(() => 0), ...completion.map((t) => -t / 100)]),
  promptLength: prompt.length,
  calls: [0],
});

const rollouts: RolloutRows[] = [
  { rolloutId: 'a', groupId: 'g', reward: 1, rows: [row([1, 2], [3, 4])] },
  { rolloutId: 'b', groupId: 'g', reward: 0, rows: [row([1], [5]), row([9], [6])] }, // split into two rows
  { rolloutId: 'c', groupId: 'g', reward: null, rows: [row([1, 2, 3, 4, 5], [7])] },
];

describe('the batch', () => {
  it('packs rows in rollout order with advantages and weights on the loss tokens only', () => {
    const { tensors: t, meta } = buildBatch(rollouts, {
      advantage: 'drgrpo',
      lossNorm: 'per-rollout-mean',
      missingReward: 'zero',
      maxResponseTokens: 16,
    });
    expect(Array.from(t.input_ids)).toEqual([1, 2, 3, 4, 1, 5, 9, 6, 1, 2, 3, 4, 5, 7]);
    expect(Array.from(t.row_offsets as BigInt64Array, Number)).toEqual([0, 4, 6, 8, 14]);
    expect(Array.from(t.prompt_lengths)).toEqual([2, 1, 1, 5]);
    expect(Array.from(t.rollout_index)).toEqual([0, 1, 1, 2]);
    expect(Array.from(t.loss_mask)).toEqual([0, 0, 1, 1, 0, 1, 0, 1, 0, 0, 0, 0, 0, 1]);
    // Rewards 1, 0 and 0 (missing → 0): mean 1/3.
    const adv = [0, 0, 2 / 3, 2 / 3, 0, -1 / 3, 0, -1 / 3, 0, 0, 0, 0, 0, -1 / 3];
    for (const [i, v] of Array.from(t.advantages).entries()) expect(v).toBeCloseTo(adv[i], 6);
    // 1 / (N · T_r): a has 2 loss tokens, b 2 over its two rows, c 1.
    const w = [0, 0, 1 / 6, 1 / 6, 0, 1 / 6, 0, 1 / 6, 0, 0, 0, 0, 0, 1 / 3];
    for (const [i, v] of Array.from(t.loss_weights).entries()) expect(v).toBeCloseTo(w[i], 6);
    expect(Array.from(t.rollout_logprobs).map((v) => Math.round(v * 100) / 100)).toEqual([
      0, 0, -0.03, -0.04, 0, -0.05, 0, -0.06, 0, 0, 0, 0, 0, -0.07,
    ]);
    expect(meta.rollouts).toEqual([
      { rollout_id: 'a', group_id: 'g', reward: 1, rows: 1 },
      { rollout_id: 'b', group_id: 'g', reward: 0, rows: 2 },
      { rollout_id: 'c', group_id: 'g', reward: 0, rows: 1 },
    ]);
    expect(meta.metrics).toMatchObject({ rollouts: 3, rows: 4, tokens: 14, loss_tokens: 5 });
  });

  it('drops after advantages: a dropped row does not move the baseline of the others', () => {
    const { tensors: t, meta } = buildBatch(rollouts, {
      advantage: 'drgrpo',
      lossNorm: 'token-mean',
      missingReward: 'drop',
      maxPromptTokens: 4,
      maxResponseTokens: 1,
    });
    // c is dropped for its missing reward (so the mean is 0.5); a's prompt fits; its response is cut to 1 token.
    expect(meta.metrics).toMatchObject({
      dropped_missing_reward: 1,
      truncated_rows: 1,
      rollouts: 2,
      rows: 3,
      loss_tokens: 3,
    });
    expect(Array.from(t.advantages)).toEqual([0, 0, 0.5, 0, -0.5, 0, -0.5]);
    const longPrompt = buildBatch(rollouts, {
      advantage: 'drgrpo',
      lossNorm: 'token-mean',
      missingReward: 'zero',
      maxPromptTokens: 4,
      maxResponseTokens: 8,
    });
    // c's row is dropped for its prompt, after its reward (0) took part in the mean (1/3).
    expect(longPrompt.meta.metrics).toMatchObject({
      dropped_long_prompt_rows: 1,
      dropped_rollouts_without_rows: 1,
      rollouts: 2,
    });
    expect(longPrompt.tensors.advantages[2]).toBeCloseTo(2 / 3, 6);
  });

  it('drops zero-variance groups when asked, after advantages, and counts them', () => {
    const flat: RolloutRows[] = [
      ...rollouts,
      { rolloutId: 'x', groupId: 'same', reward: 0.5, rows: [row([1], [2])] },
      { rolloutId: 'y', groupId: 'same', reward: 0.5, rows: [row([1], [3])] },
      { rolloutId: 'z', groupId: null, reward: 0.5, rows: [row([1], [4])] }, // alone: kept, its advantage is its reward
    ];
    const { meta } = buildBatch(flat, {
      advantage: 'grpo',
      lossNorm: 'token-mean',
      missingReward: 'zero',
      maxResponseTokens: 16,
      dropZeroVariance: true,
    });
    expect(meta.metrics).toMatchObject({ dropped_zero_variance: 2, rollouts: 4 });
    expect(meta.rollouts.map((r) => r.rollout_id)).toEqual(['a', 'b', 'c', 'z']);
    expect(
      buildBatch(flat, { advantage: 'grpo', lossNorm: 'token-mean', missingReward: 'zero', maxResponseTokens: 16 }).meta
        .metrics.rollouts,
    ).toBe(6);
  });

  it('drops rollouts cut at max_tokens when asked, after their rewards set the baseline', () => {
    const cut = rollouts.map((r) => ({ ...r, overlong: r.rolloutId === 'b' }));
    const options = {
      advantage: 'drgrpo',
      lossNorm: 'token-mean',
      missingReward: 'zero',
      maxResponseTokens: 16,
    } as const;
    const { meta, tensors } = buildBatch(cut, { ...options, dropOverlong: true });
    expect(meta.metrics).toMatchObject({ dropped_overlong: 1, dropped_rollouts_without_rows: 0, rollouts: 2 });
    expect(meta.rollouts.map((r) => r.rollout_id)).toEqual(['a', 'c']);
    // a keeps the advantage it had beside b (2/3): b's reward still counted in the group's mean.
    expect(tensors.advantages.find((x) => x !== 0)).toBeCloseTo(2 / 3, 6);
    expect(buildBatch(cut, options).meta.metrics).toMatchObject({ dropped_overlong: 0, rollouts: 3 });
  });

  it('aligns the row count to a multiple after advantages, dropping the least signal first', () => {
    // drgrpo advantages: a 2/3, b −1/3 (two rows), c −1/3. Four rows, multiple 3: one row goes, from the smallest
    // |advantage|, the later rollout first among equals: c's only row, so c leaves the batch.
    const three = buildBatch(rollouts, {
      advantage: 'drgrpo',
      lossNorm: 'per-rollout-mean',
      missingReward: 'zero',
      maxResponseTokens: 16,
      rowMultiple: 3,
    });
    expect(three.meta.metrics).toMatchObject({ dropped_alignment_rows: 1, rows: 3, rollouts: 2 });
    expect(three.meta.rollouts.map((r) => r.rollout_id)).toEqual(['a', 'b']);
    expect(three.tensors.advantages[2]).toBeCloseTo(2 / 3, 6); // the baseline still counts c
    // Weights are over what is trained: 1 / (N · T_r) with N = 2.
    expect(Array.from(three.tensors.loss_weights).filter((w) => w > 0)).toEqual([0.25, 0.25, 0.25, 0.25]);
    // Rewards 1, 0.5, 0: b (two rows) has the smallest |advantage| (0) and loses its last row only.
    const graded = rollouts.map((r, i) => ({ ...r, reward: [1, 0.5, 0][i] }));
    const partial = buildBatch(graded, {
      advantage: 'drgrpo',
      lossNorm: 'token-mean',
      missingReward: 'zero',
      maxResponseTokens: 16,
      rowMultiple: 3,
    });
    expect(partial.meta.rollouts.map((r) => `${r.rollout_id}:${r.rows}`)).toEqual(['a:1', 'b:1', 'c:1']);
    expect(Array.from(partial.tensors.input_ids)).toEqual([1, 2, 3, 4, 1, 5, 1, 2, 3, 4, 5, 7]);
    expect(partial.meta.metrics.dropped_alignment_rows).toBe(1);
  });

  it('round-trips through a safetensors file', () => {
    const batch = buildBatch(rollouts, {
      advantage: 'grpo',
      lossNorm: 'seq-mean-token-mean',
      missingReward: 'zero',
      maxResponseTokens: 16,
    });
    const path = join(tempDir(), 'batch.safetensors');
    writeSafetensors(path, batch.tensors, { alight: JSON.stringify(batch.meta) });
    const read = readSafetensors(path);
    expect(Object.keys(read.tensors)).toEqual(Object.keys(batch.tensors));
    for (const [name, tensor] of Object.entries(batch.tensors)) expect(read.tensors[name]).toEqual(tensor);
    expect(JSON.parse(read.metadata.alight)).toEqual(batch.meta);
  });
});
