import type { Diagnosis } from './diagnose.js';

/** Explains a merge break from the row's tokens, the prompt's and where they first differ. */
export type Explain = (context: readonly number[], prompt: readonly number[], position: number, lastAnswer: number) => Diagnosis;

/** One recorded call, as merging needs it. */
export interface TraceCall {
  seq: number;
  status: string;
  promptIds: ArrayLike<number> | null;
  completionIds: ArrayLike<number> | null;
  completionLogprobs: ArrayLike<number> | null;
  /** When the store knows it: the prompt is `length` tokens of call `seq`'s prompt + completion, then `suffix`. */
  extends?: { seq: number; length: number; suffix: ArrayLike<number> };
}

/** A training row: a token sequence with the tokens the policy sampled marked for the loss. */
export interface Row {
  tokens: number[];
  /** 1 where the policy sampled the token. */
  mask: number[];
  /** The engine's logprob of each sampled token, 0 elsewhere. */
  logprobs: number[];
  /** Tokens of the row's first prompt. */
  promptLength: number;
  /** The calls merged into the row, by seq. */
  calls: number[];
}

/** A call that extended no open row although rows were open: the evidence for diagnosing why. */
export interface MergeBreak {
  seq: number;
  /** The open row sharing the longest prefix with the call's prompt, and where they first differ. */
  row: number;
  position: number;
  /** Tokens of that row's context and of the prompt from a few before the difference. */
  context: number[];
  prompt: number[];
  /** Why, when merging was given a way to tell (see `diagnose`). */
  diagnosis?: Diagnosis;
}

export interface Merged {
  rows: Row[];
  breaks: MergeBreak[];
  skipped: { errors: number; withoutTokens: number };
}

export const mergeLevels = ['trajectory', 'transition'] as const;
export type MergeLevel = (typeof mergeLevels)[number];

const around = 8;

/**
 * Turns a rollout's calls into rows (DESIGN §6). `trajectory`: a call extends the open row whose context (its tokens so
 * far) is the longest prefix of the call's prompt, adding the rest of the prompt unmasked and the completion masked;
 * a call that extends no row starts one, and is a merge break when rows were open. `transition`: one row per call.
 */
export function mergeCalls(calls: readonly TraceCall[], level: MergeLevel, explain?: Explain): Merged {
  const rows: Row[] = [];
  const breaks: MergeBreak[] = [];
  const skipped = { errors: 0, withoutTokens: 0 };
  for (const call of [...calls].sort((a, b) => a.seq - b.seq)) {
    if (call.status !== 'ok') { skipped.errors++; continue; }
    if (!call.completionIds) { skipped.withoutTokens++; continue; }
    // The common case, a turn that extends the row its previous call ended, needs no prompt comparison.
    const next = level === 'trajectory' && call.extends ? extendedRow(rows, call.extends) : undefined;
    if (next) {
      for (let i = 0; i < call.extends!.suffix.length; i++) push(next, call.extends!.suffix[i], 0, 0);
      appendCompletion(next, call);
      continue;
    }
    const prompt = call.promptIds;
    if (!prompt) { skipped.withoutTokens++; continue; }
    const target = level === 'trajectory' ? extendable(rows, prompt) : -1;
    if (target === -1) {
      if (level === 'trajectory' && rows.length > 0) breaks.push(breakOf(call.seq, rows, prompt, explain));
      rows.push({ tokens: [], mask: [], logprobs: [], promptLength: prompt.length, calls: [] });
    }
    const row = rows[target === -1 ? rows.length - 1 : target];
    for (let i = row.tokens.length; i < prompt.length; i++) push(row, prompt[i], 0, 0);
    appendCompletion(row, call);
  }
  return { rows, breaks, skipped };
}

function appendCompletion(row: Row, call: TraceCall): void {
  const ids = call.completionIds!;
  const lps = call.completionLogprobs;
  for (let i = 0; i < ids.length; i++) push(row, ids[i], 1, lps?.[i] ?? 0);
  row.calls.push(call.seq);
}

/**
 * The row a call extends when its stored prompt is the whole of the row its base call ended, plus a suffix — unless a
 * longer open row is also a prefix of that prompt (then the general rule decides, as DESIGN §6 says).
 */
function extendedRow(rows: readonly Row[], ext: NonNullable<TraceCall['extends']>): Row | undefined {
  const base = rows.find((r) => r.calls[r.calls.length - 1] === ext.seq);
  if (!base || base.tokens.length !== ext.length) return undefined;
  const longer = rows.some((r) => r.tokens.length > ext.length
    && sharedPrefix(r.tokens, base.tokens) === ext.length
    && r.tokens.length - ext.length <= ext.suffix.length
    && r.tokens.slice(ext.length).every((t, i) => t === ext.suffix[i]));
  return longer ? undefined : base;
}

function push(row: Row, token: number, mask: number, logprob: number): void {
  row.tokens.push(token);
  row.mask.push(mask);
  row.logprobs.push(logprob);
}

/** The open row whose whole context is the longest prefix of `prompt`, or -1. */
function extendable(rows: readonly Row[], prompt: ArrayLike<number>): number {
  let best = -1;
  rows.forEach((row, i) => {
    if (row.tokens.length > prompt.length) return;
    if (best !== -1 && rows[best].tokens.length >= row.tokens.length) return;
    if (sharedPrefix(row.tokens, prompt) === row.tokens.length) best = i;
  });
  return best;
}

function breakOf(seq: number, rows: readonly Row[], prompt: ArrayLike<number>, explain?: Explain): MergeBreak {
  let row = 0;
  let position = -1;
  rows.forEach((r, i) => {
    const shared = sharedPrefix(r.tokens, prompt);
    if (shared > position) { row = i; position = shared; }
  });
  const from = Math.max(0, position - around);
  const whole = Array.from(prompt);
  return {
    seq, row, position,
    context: rows[row].tokens.slice(from, position + around),
    prompt: whole.slice(from, position + around),
    ...(explain && { diagnosis: explain(rows[row].tokens, whole, position, lastAnswerStart(rows[row])) }),
  };
}

/** Where the row's last run of sampled tokens begins. */
function lastAnswerStart(row: Row): number {
  let i = row.mask.length;
  while (i > 0 && row.mask[i - 1] === 1) i--;
  return i;
}

function sharedPrefix(a: ArrayLike<number>, b: ArrayLike<number>): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}
