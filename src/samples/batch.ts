import {
  type AdvantageEstimator,
  groupAdvantages,
  type MissingRewardPolicy,
  settleRewards,
} from '../algo/advantages.js';
import { type LossNorm, lossWeights } from '../algo/loss-weights.js';
import { mean } from '../algo/stats.js';
import type { Row } from './merge.js';
import type { Tensor } from './safetensors.js';

export interface RolloutRows {
  rolloutId: string;
  /** Rollouts of the same task in the same step; null: a group of its own. */
  groupId: string | null;
  reward: number | null;
  rows: Row[];
  /** A call of the rollout was cut at its max_tokens (finish_reason `length`). */
  overlong?: boolean;
}

export interface BatchOptions {
  advantage: AdvantageEstimator;
  lossNorm: LossNorm;
  missingReward: MissingRewardPolicy;
  /** Rows whose first prompt is longer are dropped (after advantages). */
  maxPromptTokens?: number;
  /** Tokens after a row's first prompt beyond this are cut (after advantages). Also H of the `constant` norm. */
  maxResponseTokens: number;
  /**
   * Drop the rollouts of groups (of two or more) whose rewards are all equal: they carry no signal (after advantages).
   */
  dropZeroVariance?: boolean;
  /**
   * Drop the rollouts with a reply cut at its max_tokens (after advantages): DAPO's overlong filtering. A cut reply
   * carries no stop token, so its negative advantage would push the stop down and lengthen every reply.
   */
  dropOverlong?: boolean;
  /** Drop rows until their count is a multiple of this, as a trainer's mini-batches need (after advantages). */
  rowMultiple?: number;
  padTokenId?: number;
}

export interface BatchMetrics {
  rollouts: number;
  rows: number;
  tokens: number;
  loss_tokens: number;
  dropped_missing_reward: number;
  dropped_zero_variance: number;
  dropped_overlong: number;
  dropped_long_prompt_rows: number;
  dropped_rollouts_without_rows: number;
  truncated_rows: number;
  dropped_alignment_rows: number;
  reward_mean: number | null;
  advantage_mean: number | null;
}

/** docs/design.md#batch-file's table, in its order. */
export interface BatchTensors extends Record<string, Tensor> {
  input_ids: Int32Array;
  row_offsets: BigInt64Array;
  prompt_lengths: Int32Array;
  loss_mask: Uint8Array;
  rollout_logprobs: Float32Array;
  advantages: Float32Array;
  loss_weights: Float32Array;
  rollout_index: Int32Array;
}

export interface Batch {
  tensors: BatchTensors;
  /** `__metadata__["alight"]` (docs/design.md#batch-file). */
  meta: {
    version: 1;
    rollouts: { rollout_id: string; group_id: string | null; reward: number; rows: number }[];
    advantage: AdvantageEstimator;
    loss_norm: LossNorm;
    pad_token_id: number;
    metrics: BatchMetrics;
  };
}

/**
 * Rows of a step → the packed batch (docs/design.md#batch-file). Before advantages, a rollout without a reward leaves
 * the batch (`missingReward: drop`) or counts as 0; the caller has already left out failed rollouts (a training step
 * with `failedRollouts: zero` keeps them, at reward 0) and those whose calls merged into no rows, so none of these is
 * in any group's baseline. Then advantages within groups; only then the other drops and cuts (zero-variance groups,
 * rows with too long a prompt, tokens past the response cut, rows for `rowMultiple`), so that none of them moves a
 * baseline; then loss weights over what remains.
 */
export function buildBatch(rollouts: readonly RolloutRows[], options: BatchOptions): Batch {
  const settled = settleRewards(
    rollouts.map((r) => r.reward),
    options.missingReward,
  );
  const kept = settled.kept.map((i) => rollouts[i]);
  const groups = kept.map((r) => r.groupId ?? `rollout:${r.rolloutId}`);
  const advantages = groupAdvantages(settled.rewards, groups, options.advantage);
  const flat = options.dropZeroVariance ? zeroVarianceGroups(groups, settled.rewards) : new Set<string>();
  const scored = kept.map((rollout, i) => ({
    rollout,
    reward: settled.rewards[i],
    advantage: advantages[i],
    rows: rollout.rows,
  }));
  const trimmed = trimRollouts(scored, groups, flat, options);
  const { final } = trimmed;
  const beforeAlignment = final.length;
  const droppedAligned = alignRows(final, options.rowMultiple ?? 1);

  const shapes = final.flatMap((f, r) =>
    f.rows.map((row) => ({ rollout: r, lossTokens: row.mask.reduce((a, m) => a + m, 0) })),
  );
  const weights = lossWeights(shapes, final.length, options.lossNorm, options.maxResponseTokens);
  const { tensors, rows, tokens } = pack(final, weights);
  return {
    tensors,
    meta: {
      version: 1,
      rollouts: final.map((f) => ({
        rollout_id: f.rollout.rolloutId,
        group_id: f.rollout.groupId,
        reward: f.reward,
        rows: f.rows.length,
      })),
      advantage: options.advantage,
      loss_norm: options.lossNorm,
      pad_token_id: options.padTokenId ?? 0,
      metrics: {
        rollouts: final.length,
        rows,
        tokens,
        loss_tokens: shapes.reduce((a, s) => a + s.lossTokens, 0),
        dropped_missing_reward: rollouts.length - kept.length,
        dropped_zero_variance: trimmed.droppedFlat,
        dropped_overlong: trimmed.droppedOverlong,
        dropped_long_prompt_rows: trimmed.droppedRows,
        dropped_rollouts_without_rows: kept.length - trimmed.droppedFlat - trimmed.droppedOverlong - beforeAlignment,
        truncated_rows: trimmed.truncated,
        dropped_alignment_rows: droppedAligned,
        reward_mean: mean(final.map((f) => f.reward)),
        advantage_mean: mean(final.map((f) => f.advantage)),
      },
    },
  };
}

/** A rollout in the batch: its settled reward, its advantage and the rows it keeps. */
type Scored = { rollout: RolloutRows; reward: number; advantage: number; rows: Row[] };

/**
 * The rollouts of zero-variance groups (`flat`) and, with `dropOverlong`, those cut at max_tokens left out, each row
 * whose first prompt is too long dropped and each response past `maxResponseTokens` cut; a rollout left with no rows
 * leaves the batch. Counts each kind.
 */
function trimRollouts(scored: Scored[], groups: readonly string[], flat: Set<string>, options: BatchOptions) {
  let droppedRows = 0;
  let truncated = 0;
  let droppedFlat = 0;
  let droppedOverlong = 0;
  const final: Scored[] = [];
  scored.forEach((s, i) => {
    if (flat.has(groups[i])) {
      droppedFlat++;
      return;
    }
    if (options.dropOverlong && s.rollout.overlong) {
      droppedOverlong++;
      return;
    }
    const rows = s.rows
      .filter((row) => {
        const tooLong = options.maxPromptTokens !== undefined && row.promptLength > options.maxPromptTokens;
        if (tooLong) droppedRows++;
        return !tooLong;
      })
      .map((row) => {
        const cut = cutResponse(row, options.maxResponseTokens);
        if (cut !== row) truncated++;
        return cut;
      });
    if (rows.length) final.push({ ...s, rows });
  });
  return { final, droppedFlat, droppedOverlong, droppedRows, truncated };
}

/** The row with at most `maxResponseTokens` tokens after its first prompt (the row itself when it has no more). */
function cutResponse(row: Row, maxResponseTokens: number): Row {
  const end = row.promptLength + maxResponseTokens;
  if (row.tokens.length <= end) return row;
  return {
    ...row,
    tokens: row.tokens.slice(0, end),
    mask: row.mask.slice(0, end),
    logprobs: row.logprobs.slice(0, end),
  };
}

/** The rows packed end to end, each loss token carrying its rollout's advantage and its row's loss weight. */
export function pack(
  final: Scored[],
  weights: ArrayLike<number>,
): { tensors: BatchTensors; rows: number; tokens: number } {
  const rows = final.flatMap((f) => f.rows);
  const tokens = rows.reduce((a, r) => a + r.tokens.length, 0);
  const t: BatchTensors = {
    input_ids: new Int32Array(tokens),
    row_offsets: new BigInt64Array(rows.length + 1),
    prompt_lengths: new Int32Array(rows.length),
    loss_mask: new Uint8Array(tokens),
    rollout_logprobs: new Float32Array(tokens),
    advantages: new Float32Array(tokens),
    loss_weights: new Float32Array(tokens),
    rollout_index: new Int32Array(rows.length),
  };
  let at = 0;
  let b = 0;
  final.forEach((f, r) => {
    for (const row of f.rows) {
      t.row_offsets[b] = BigInt(at);
      t.prompt_lengths[b] = row.promptLength;
      t.rollout_index[b] = r;
      t.input_ids.set(row.tokens, at);
      t.loss_mask.set(row.mask, at);
      t.rollout_logprobs.set(row.logprobs, at);
      // Loss tokens come in runs (one per answer): fill each run at once.
      const { mask } = row;
      for (let k = mask.indexOf(1); k !== -1; ) {
        const end = mask.indexOf(0, k);
        const to = end === -1 ? mask.length : end;
        t.advantages.fill(f.advantage, at + k, at + to);
        t.loss_weights.fill(weights[b], at + k, at + to);
        k = end === -1 ? -1 : mask.indexOf(1, end);
      }
      at += row.tokens.length;
      b++;
    }
  });
  t.row_offsets[rows.length] = BigInt(at);
  return { tensors: t, rows: rows.length, tokens };
}

/**
 * Drops rows until their count is a multiple of `multiple`: from the rollouts with the smallest |advantage| first (the
 * least signal; later rollouts first among equals), each losing its last rows first. A rollout left without rows
 * leaves the batch; the others keep their advantage. Returns the rows dropped.
 */
function alignRows(final: { advantage: number; rows: Row[] }[], multiple: number): number {
  const surplus = final.reduce((a, f) => a + f.rows.length, 0) % multiple;
  let left = surplus;
  const order = final
    .map((_, i) => i)
    .sort((a, b) => Math.abs(final[a].advantage) - Math.abs(final[b].advantage) || b - a);
  for (const i of order) {
    if (left === 0) break;
    const n = Math.min(left, final[i].rows.length);
    final[i].rows = final[i].rows.slice(0, final[i].rows.length - n);
    left -= n;
  }
  for (let i = final.length - 1; i >= 0; i--) if (final[i].rows.length === 0) final.splice(i, 1);
  return surplus;
}

/** Groups of two or more rollouts whose rewards are all equal. */
function zeroVarianceGroups(groups: readonly string[], rewards: readonly number[]): Set<string> {
  const seen = new Map<string, { reward: number; count: number; flat: boolean }>();
  groups.forEach((g, i) => {
    const s = seen.get(g);
    if (!s) seen.set(g, { reward: rewards[i], count: 1, flat: true });
    else {
      s.count++;
      s.flat &&= s.reward === rewards[i];
    }
  });
  return new Set([...seen].filter(([, s]) => s.flat && s.count > 1).map(([g]) => g));
}

/** Rows to learn from as they are (`alight sft`): advantage 1, each loss token weighted 1 / all loss tokens (the mean). */
export function meanLossBatch(examples: readonly RolloutRows[]): BatchTensors {
  const lossTokens = examples.reduce(
    (a, e) => a + e.rows.reduce((s, r) => s + r.mask.reduce((m, x) => m + x, 0), 0),
    0,
  );
  const scored = examples.map((rollout) => ({
    rollout,
    reward: rollout.reward ?? 0,
    advantage: 1,
    rows: rollout.rows,
  }));
  return pack(
    scored,
    scored.flatMap((s) => s.rows.map(() => 1 / lossTokens)),
  ).tensors;
}
