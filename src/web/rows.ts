import { type Detokenize, diagnose } from '../samples/diagnose.js';
import { mergeCalls, type Row } from '../samples/merge.js';
import { ofPurposes } from '../samples/run-samples.js';
import type { Store } from '../store/store.js';
import { advantagesIn, rulesOf } from './groups.js';
import type { BatchRow, TrainedRows } from './trained.js';

export interface TokenView {
  id: number;
  /** The token alone, decoded (null without a tokenizer). */
  text: string | null;
  /** The policy sampled it (it carries loss). */
  sampled: boolean;
  logprob: number | null;
  /** Its loss weight in the step that trained it (0: cut from the batch); null when no step trained the rollout. */
  weight: number | null;
}

/**
 * A rollout's training rows as `samples build` makes them (trajectory merging), token by token: what was prompt and
 * what the policy sampled with its logprob, the rollout's advantage, each token's loss weight where a step trained it
 * (read from that step's batch file: what the trainer got), and each merge break at the row and token where it
 * happened, classified as `samples diagnose` does. The advantage is the batch's when a step trained the rollout, else
 * the one its group gives it by the run's estimator.
 */
export function rolloutRows(store: Store, id: string, detokenize: Detokenize | null, trained: TrainedRows) {
  const [r] = store.rolloutSummaries({ ids: [id] });
  if (!r) return null;
  const decode = detokenize ?? undefined;
  // Merged as the run's steps merged them (train.batch.level), so rows line up with its batch files.
  const rules = rulesOf(store, r.run);
  const merged = mergeCalls(
    ofPurposes(store.calls.tokenCalls(id), rules.purposes),
    rules.level,
    (context, prompt, position, answers) => diagnose(context, prompt, position, answers, decode),
  );
  const batch = trained.find(r.run, id);
  const unused = [...(batch?.rows ?? [])];
  const group = r.group_id === null ? new Map<string, number>() : advantagesIn(store, r.run, [r.group_id], rules);
  return {
    rollout: id,
    reward: r.reward,
    estimator: rules.estimator,
    advantage: (batch && batchAdvantage(batch.rows)) ?? group.get(id) ?? null,
    group: group.size,
    step: batch?.step ?? null,
    tokenizer: detokenize !== null,
    rows: merged.rows.map((row) => rowView(row, batch ? takeBatchRow(unused, row) : undefined, detokenize)),
    breaks: merged.breaks.map((b) => ({
      seq: b.seq,
      row: b.row,
      position: b.position,
      kind: b.diagnosis?.kind ?? 'other',
      reason: b.diagnosis?.reason ?? '',
      contextText: b.diagnosis?.contextText ?? null,
      promptText: b.diagnosis?.promptText ?? null,
    })),
    skipped: merged.skipped,
  };
}

/**
 * A merged row's tokens; `inBatch` is its batch row (null: the step dropped it), undefined when no step trained the
 * rollout. A batch row is the merged row, or its start when the step cut tokens past the response budget.
 */
function rowView(row: Row, inBatch: BatchRow | null | undefined, detokenize: Detokenize | null) {
  return {
    calls: row.calls,
    promptLength: row.promptLength,
    inBatch: inBatch === undefined ? null : inBatch !== null,
    tokens: Array.from(row.tokens, (t, i): TokenView => {
      const sampled = row.mask[i] === 1;
      return {
        id: t,
        text: detokenize ? detokenize([t]) : null,
        sampled,
        logprob: sampled ? row.logprobs[i] : null,
        weight: inBatch === undefined ? null : (inBatch?.weights[i] ?? 0),
      };
    }),
  };
}

/** The first unclaimed batch row that is this row or its start (claimed: rows can repeat within a rollout). */
function takeBatchRow(unused: BatchRow[], row: Row): BatchRow | null {
  const at = unused.findIndex(
    (b) => b.tokens.length <= row.tokens.length && b.tokens.every((t, i) => t === row.tokens[i]),
  );
  return at === -1 ? null : unused.splice(at, 1)[0];
}

/** The advantage a step's batch gave the rollout: the one on its loss tokens. */
function batchAdvantage(rows: readonly BatchRow[]): number | undefined {
  for (const b of rows) {
    const at = b.mask.indexOf(1);
    if (at !== -1) return b.advantages[at];
  }
  return undefined;
}
