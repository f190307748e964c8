import type { MergeLevel } from '../config/train-schema.js';
import { commonPrefix } from '../store/codec.js';
import type { AnswerSpan, Diagnosis } from './diagnose.js';

/** Explains a merge break from the row's tokens, the prompt's and where they first differ. */
export type Explain = (
  context: readonly number[],
  prompt: readonly number[],
  position: number,
  answers: AnswerSpan,
) => Diagnosis;

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
  tokens: Int32Array;
  /** 1 where the policy sampled the token. */
  mask: Uint8Array;
  /** The engine's logprob of each sampled token, 0 elsewhere. */
  logprobs: Float32Array;
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

const around = 8;

/**
 * Turns a rollout's calls into rows (docs/design.md#merging-calls-into-rows). `trajectory`: a call extends the open
 * row whose context (its tokens so far) is the longest prefix of the call's prompt, adding the rest of the prompt
 * unmasked and the completion masked; a call that extends no row starts one, and is a merge break when rows were open.
 * `transition`: one row per call.
 */
export function mergeCalls(calls: readonly TraceCall[], level: MergeLevel, explain?: Explain): Merged {
  const rows: RowBuffer[] = [];
  const breaks: MergeBreak[] = [];
  const skipped = { errors: 0, withoutTokens: 0 };
  for (const call of [...calls].sort((a, b) => a.seq - b.seq)) {
    if (call.status !== 'ok') {
      skipped.errors++;
      continue;
    }
    if (!call.completionIds) {
      skipped.withoutTokens++;
      continue;
    }
    // The common case, a turn that extends the row its previous call ended, needs no prompt comparison.
    const next = level === 'trajectory' && call.extends ? extendedRow(rows, call.extends) : undefined;
    if (next) {
      next.append(call.extends!.suffix, 0, null);
      next.answer(call);
      continue;
    }
    const prompt = call.promptIds;
    if (!prompt) {
      skipped.withoutTokens++;
      continue;
    }
    const target = level === 'trajectory' ? extendable(rows, prompt) : -1;
    if (target === -1) {
      if (level === 'trajectory' && rows.length > 0) breaks.push(breakOf(call.seq, rows, prompt, explain));
      rows.push(new RowBuffer(prompt.length));
    }
    const row = rows[target === -1 ? rows.length - 1 : target];
    row.append(prompt, row.length, null);
    row.answer(call);
  }
  return { rows: rows.map((r) => r.finish()), breaks, skipped };
}

/** A row being built: typed buffers that grow by doubling and are filled by bulk copies. */
class RowBuffer {
  private tokens = new Int32Array(1024);
  private mask = new Uint8Array(1024);
  private logprobs = new Float32Array(1024);
  length = 0;
  readonly calls: number[] = [];

  constructor(readonly promptLength: number) {}

  /** The tokens so far. */
  get context(): Int32Array {
    return this.tokens.subarray(0, this.length);
  }

  /** Appends `ids[from:]`, masked and with their logprobs when `logprobs` is given. */
  append(ids: ArrayLike<number>, from: number, logprobs: ArrayLike<number> | null): void {
    const n = ids.length - from;
    if (n <= 0) return;
    this.reserve(this.length + n);
    this.tokens.set(
      from === 0
        ? ids
        : ArrayBuffer.isView(ids)
          ? (ids as Int32Array).subarray(from)
          : (Array.prototype.slice.call(ids, from) as number[]),
      this.length,
    );
    if (logprobs) {
      this.mask.fill(1, this.length, this.length + n);
      this.logprobs.set(
        logprobs.length === n ? logprobs : Array.from({ length: n }, (_, i) => logprobs[i] ?? 0),
        this.length,
      );
      // A logprob the engine did not give is NaN in the store: missing, so 0 as a call's missing logprobs are.
      const lp = this.logprobs;
      for (let k = this.length; k < this.length + n; k++) if (Number.isNaN(lp[k])) lp[k] = 0;
    }
    this.length += n;
  }

  answer(call: TraceCall): void {
    const ids = call.completionIds!;
    this.append(ids, 0, call.completionLogprobs ?? new Float32Array(ids.length));
    this.calls.push(call.seq);
  }

  /** Where the last run of sampled tokens begins. */
  lastAnswerStart(): number {
    let i = this.length;
    while (i > 0 && this.mask[i - 1] === 1) i--;
    return i;
  }

  finish(): Row {
    return {
      tokens: this.tokens.slice(0, this.length),
      mask: this.mask.slice(0, this.length),
      logprobs: this.logprobs.slice(0, this.length),
      promptLength: this.promptLength,
      calls: this.calls,
    };
  }

  private reserve(size: number): void {
    if (size <= this.tokens.length) return;
    let capacity = this.tokens.length;
    while (capacity < size) capacity *= 2;
    const grow = <T extends Int32Array | Uint8Array | Float32Array>(old: T, make: (n: number) => T): T => {
      const a = make(capacity);
      a.set(old);
      return a;
    };
    this.tokens = grow(this.tokens, (n) => new Int32Array(n));
    this.mask = grow(this.mask, (n) => new Uint8Array(n));
    this.logprobs = grow(this.logprobs, (n) => new Float32Array(n));
  }
}

/**
 * The row a call extends when its stored prompt is the whole of the row its base call ended, plus a suffix — unless a
 * longer open row is also a prefix of that prompt (then the general rule decides, as
 * docs/design.md#merging-calls-into-rows says).
 */
function extendedRow(rows: readonly RowBuffer[], ext: NonNullable<TraceCall['extends']>): RowBuffer | undefined {
  const base = rows.find((r) => r.calls[r.calls.length - 1] === ext.seq);
  if (!base || base.length !== ext.length) return undefined;
  const longer = rows.some(
    (r) =>
      r.length > ext.length &&
      commonPrefix(r.context, base.context) === ext.length &&
      r.length - ext.length <= ext.suffix.length &&
      r.context.subarray(ext.length).every((t, i) => t === ext.suffix[i]),
  );
  return longer ? undefined : base;
}

/** The open row whose whole context is the longest prefix of `prompt`, or -1. */
function extendable(rows: readonly RowBuffer[], prompt: ArrayLike<number>): number {
  let best = -1;
  rows.forEach((row, i) => {
    if (row.length > prompt.length) return;
    if (best !== -1 && rows[best].length >= row.length) return;
    if (commonPrefix(row.context, prompt) === row.length) best = i;
  });
  return best;
}

function breakOf(seq: number, rows: readonly RowBuffer[], prompt: ArrayLike<number>, explain?: Explain): MergeBreak {
  let row = 0;
  let position = -1;
  rows.forEach((r, i) => {
    const shared = commonPrefix(r.context, prompt);
    if (shared > position) {
      row = i;
      position = shared;
    }
  });
  const from = Math.max(0, position - around);
  const whole = Array.from(prompt);
  return {
    seq,
    row,
    position,
    context: Array.from(rows[row].context.subarray(from, position + around)),
    prompt: whole.slice(from, position + around),
    ...(explain && {
      diagnosis: explain(Array.from(rows[row].context), whole, position, {
        first: rows[row].promptLength,
        last: rows[row].lastAnswerStart(),
      }),
    }),
  };
}
