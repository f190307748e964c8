import { type AdvantageEstimator, advantageEstimators, groupAdvantages } from '../algo/advantages.js';
import { type Detokenize, diagnose } from '../samples/diagnose.js';
import { mergeCalls } from '../samples/merge.js';
import type { Store } from '../store/store.js';

export interface TokenView {
  id: number;
  /** The token alone, decoded (null without a tokenizer). */
  text: string | null;
  /** The policy sampled it (it carries loss). */
  sampled: boolean;
  logprob: number | null;
}

/**
 * A rollout's training rows as `samples build` makes them (trajectory merging), token by token: what was prompt and
 * what the policy sampled with its logprob, the rollout's advantage within its group (the run's estimator), and each
 * merge break at the row and token where it happened, classified as `samples diagnose` does.
 */
export function rolloutRows(store: Store, id: string, detokenize: Detokenize | null) {
  const [r] = store.rolloutSummaries({ ids: [id] });
  if (!r) return null;
  const decode = detokenize ?? undefined;
  const merged = mergeCalls(store.calls.tokenCalls(id), 'trajectory', (context, prompt, position, answers) =>
    diagnose(context, prompt, position, answers, decode),
  );
  return {
    rollout: id,
    reward: r.reward,
    ...advantageOf(store, r.run, r.group_id, id),
    tokenizer: detokenize !== null,
    rows: merged.rows.map((row) => ({
      calls: row.calls,
      promptLength: row.promptLength,
      tokens: Array.from(row.tokens, (t, i): TokenView => {
        const sampled = row.mask[i] === 1;
        return { id: t, text: detokenize ? detokenize([t]) : null, sampled, logprob: sampled ? row.logprobs[i] : null };
      }),
    })),
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

/** The rollout's advantage among its group's succeeded rollouts, by the run's estimator (GRPO for a recorded run). */
function advantageOf(store: Store, run: string, group: string | null, id: string) {
  const config = JSON.parse(store.getRun(run)?.config ?? '{}') as { train?: { advantage?: string } };
  const named = config.train?.advantage;
  const estimator = (named && named in advantageEstimators ? named : 'grpo') as AdvantageEstimator;
  const members = group === null ? [] : store.rolloutSummaries({ run, state: 'succeeded', group });
  const at = members.findIndex((m) => m.id === id);
  if (at === -1 || group === null) return { estimator, advantage: null, group: members.length };
  const advantages = groupAdvantages(
    members.map((m) => m.reward ?? 0),
    members.map(() => group),
    estimator,
  );
  return { estimator, advantage: advantages[at], group: members.length };
}
