import type Database from 'better-sqlite3';
import { commonPrefix, commonTokenPrefix, decodeFloat32, decodeInt32, encodeFloat32, encodeInt32 } from './codec.js';
import { defaultCache, IdleCache } from './idle-cache.js';
import { type EncodedRequest, type History, itemsKeyOf, suffixJson } from './request-json.js';

export type CallStatus = 'ok' | 'error';

/**
 * What a model call is for. `main`: the agent's own turns, what training learns from by default. The others are calls
 * a harness makes for itself (Gemini CLI's model router, next-speaker and loop checks, its history compression; any
 * harness's call that says so in `x-alight-purpose`): recorded and exported like any call, trained on only when
 * `train.batch.purposes` names them, as they are neither the task nor the policy's work on it.
 */
export const callPurposes = ['main', 'router', 'next-speaker', 'loop-check', 'compression', 'side'] as const;
export type CallPurpose = (typeof callPurposes)[number];

/** One model call as the gateway saw it; token fields are null when the upstream did not return them. */
export interface CallRecord {
  rolloutId: string;
  seq: number;
  protocol: string;
  stream: boolean;
  /** Default: `main`. */
  purpose?: CallPurpose;
  /** The body as sent upstream. Its history (chat `messages`, or a string `prompt`) is stored by reference. */
  request: EncodedRequest;
  response: Record<string, unknown> | null;
  /**
   * Where the gateway translated the harness's protocol: the harness's own request and answer (stored like `request`).
   */
  harness?: { request: EncodedRequest; response: Record<string, unknown> | null } | null;
  promptIds: ArrayLike<number> | null;
  completionIds: ArrayLike<number> | null;
  completionLogprobs: ArrayLike<number> | null;
  promptTokens: number | null;
  completionTokens: number | null;
  status: CallStatus;
  httpStatus: number | null;
  error: string | null;
  latencyMs: number;
  modelVersion: number | null;
  finishReason: string | null;
}

/** A call's tokens; `extends` says its prompt is `length` tokens of call `seq`'s prompt + completion, then `suffix`. */
export interface TokenCall {
  seq: number;
  status: string;
  purpose: CallPurpose;
  readonly promptIds: Int32Array | null;
  completionIds: Int32Array | null;
  completionLogprobs: Float32Array | null;
  /** The engine's, e.g. `length` when the reply was cut at its max_tokens. */
  finishReason: string | null;
  extends?: { seq: number; length: number; suffix: Int32Array };
}

export interface StoredCall
  extends Omit<CallRecord, 'request' | 'harness' | 'promptIds' | 'completionIds' | 'completionLogprobs'> {
  request: Record<string, unknown>;
  harness: { request: Record<string, unknown>; response: Record<string, unknown> | null } | null;
  promptIds: number[] | null;
  completionIds: number[] | null;
  completionLogprobs: number[] | null;
}

/** What later calls of the same rollout may point back to. */
interface Recent {
  id: number;
  history: History | null;
  harness: History | null;
  /** Its prompt and completion: together, the context a later prompt may extend. */
  context: [Int32Array, Int32Array] | null;
}

interface CallRow {
  id: number;
  rollout_id: string;
  seq: number;
  protocol: string;
  stream: number;
  purpose: CallPurpose;
  request: string;
  msg_ref: number | null;
  msg_prefix: number;
  response: string | null;
  prompt_ref: number | null;
  prompt_prefix: number;
  prompt_suffix: Buffer | null;
  completion_ids: Buffer | null;
  completion_logprobs: Buffer | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  status: CallStatus;
  http_status: number | null;
  error: string | null;
  latency_ms: number;
  model_version: number | null;
  finish_reason: string | null;
  harness_request: string | null;
  harness_ref: number | null;
  harness_prefix: number;
  harness_response: string | null;
}

// Enough for sub-agents and parallel chains; older calls are rarely the best prefix.
const recentPerRollout = 8;

/**
 * Calls are stored so that a rollout grows linearly: a prompt that extends an earlier call's prompt + completion
 * keeps a reference and the new suffix, and so does the message history. References are found from an
 * in-memory window of the rollout's recent calls; after a restart the first call simply stores everything.
 */
export class CallStore {
  // Dropping a rollout's recent calls costs only storage: its next call is stored without references to them.
  private recent = new IdleCache<Recent[]>(defaultCache.rollouts, defaultCache.idleS * 1000);
  private readonly seqs = new Map<string, number>();
  private readonly insert: Database.Statement;

  constructor(private readonly db: Database.Database) {
    this.insert =
      db.prepare(`INSERT INTO calls (rollout_id, seq, protocol, stream, request, msg_ref, msg_prefix, response,
      prompt_ref, prompt_prefix, prompt_suffix, completion_ids, completion_logprobs, prompt_tokens, completion_tokens,
      status, http_status, error, latency_ms, model_version, finish_reason, created_at,
      harness_request, harness_ref, harness_prefix, harness_response, purpose)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  }

  /** Bounds the rollouts whose recent calls are kept (gateway.cacheRollouts / cacheIdleS). */
  boundCache(rollouts: number, idleMs: number): void {
    this.recent = new IdleCache(rollouts, idleMs);
  }

  /** Drops the rollouts' recent calls: their next calls are stored without references (after a failed commit). */
  forgetReferences(rollouts: readonly string[]): void {
    for (const r of rollouts) this.recent.delete(r);
  }

  /** Rollouts whose recent calls are in memory now. */
  get cachedRollouts(): number {
    return this.recent.size;
  }

  /** Numbers calls in the order they arrive; concurrent calls of one rollout get distinct numbers at once. */
  nextSeq(rolloutId: string): number {
    let seq = this.seqs.get(rolloutId);
    if (seq === undefined) {
      const row = this.db.prepare('SELECT max(seq) AS m FROM calls WHERE rollout_id = ?').get(rolloutId) as {
        m: number | null;
      };
      seq = row.m === null ? 0 : row.m + 1;
    }
    this.seqs.set(rolloutId, seq + 1);
    return seq;
  }

  /** When each of a rollout's calls reached the gateway and how long it took (ms since the epoch; ms), in order. */
  timings(rolloutId: string): { arrivedAt: number; latencyMs: number }[] {
    // A call is stored when it ends: it arrived its latency earlier.
    const rows = this.db
      .prepare(
        'SELECT created_at - latency_ms AS arrivedAt, latency_ms AS latencyMs FROM calls WHERE rollout_id = ? ORDER BY id',
      )
      .all(rolloutId);
    return rows as { arrivedAt: number; latencyMs: number }[];
  }

  count(rolloutId: string): number {
    return (this.db.prepare('SELECT count(*) AS n FROM calls WHERE rollout_id = ?').get(rolloutId) as { n: number }).n;
  }

  /** Stores a call; `remember` keeps it as a reference for the rollout's later calls (false once it has ended). */
  add(call: CallRecord, remember = true): number {
    const recents = this.recent.get(call.rolloutId) ?? [];
    const history = call.request.history;
    const h = bestHistoryRef(history, recents, (r) => r.history);
    const harnessHistory = call.harness?.request.history ?? null;
    const hh = bestHistoryRef(harnessHistory, recents, (r) => r.harness);
    const prompt = call.promptIds ? int32(call.promptIds) : null;
    const p = prompt ? bestPromptRef(prompt, recents) : { ref: null, prefix: 0 };
    const completion = call.completionIds ? int32(call.completionIds) : null;

    const id = Number(
      this.insert.run(
        call.rolloutId,
        call.seq,
        call.protocol,
        call.stream ? 1 : 0,
        suffixJson(call.request, h.prefix),
        h.ref,
        h.prefix,
        call.response === null ? null : JSON.stringify(call.response),
        p.ref,
        p.prefix,
        prompt ? encodeInt32(prompt.subarray(p.prefix)) : null,
        completion ? encodeInt32(completion) : null,
        call.completionLogprobs ? encodeFloat32(call.completionLogprobs) : null,
        call.promptTokens,
        call.completionTokens,
        call.status,
        call.httpStatus,
        call.error,
        call.latencyMs,
        call.modelVersion,
        call.finishReason,
        Date.now(),
        call.harness ? suffixJson(call.harness.request, hh.prefix) : null,
        hh.ref,
        hh.prefix,
        call.harness?.response ? JSON.stringify(call.harness.response) : null,
        call.purpose ?? 'main',
      ).lastInsertRowid,
    );

    if (!remember) return id;
    keepItems(history, recents.find((r) => r.id === h.ref)?.history ?? null, h.prefix);
    keepItems(harnessHistory, recents.find((r) => r.id === hh.ref)?.harness ?? null, hh.prefix);
    recents.unshift({
      id,
      history,
      harness: harnessHistory,
      context: prompt && completion ? [prompt, completion] : null,
    });
    if (recents.length > recentPerRollout) recents.pop();
    this.recent.set(call.rolloutId, recents);
    return id;
  }

  /**
   * A call stored `ok` whose answer the harness did not read to its end (it dropped the connection): an error after
   * all.
   */
  undelivered(id: number, error: string): void {
    this.db.prepare("UPDATE calls SET status = 'error', error = ? WHERE id = ?").run(error, id);
  }

  /** Drop what is kept in memory for a finished rollout. */
  forget(rolloutId: string): void {
    this.recent.delete(rolloutId);
    this.seqs.delete(rolloutId);
  }

  /** All calls of a rollout in seq order, with prompts and histories rebuilt from their references. */
  list(rolloutId: string): StoredCall[] {
    const rows = this.db.prepare('SELECT * FROM calls WHERE rollout_id = ? ORDER BY id').all(rolloutId) as CallRow[];
    const byId = new Map<
      number,
      { request: Record<string, unknown>; harness: Record<string, unknown> | null; context: Int32Array | null }
    >();
    const out: StoredCall[] = [];
    for (const row of rows) {
      const request = JSON.parse(row.request) as Record<string, unknown>;
      if (row.msg_ref !== null) restoreHistory(request, byId.get(row.msg_ref)?.request, row.msg_prefix);
      const harness =
        row.harness_request === null ? null : (JSON.parse(row.harness_request) as Record<string, unknown>);
      if (harness && row.harness_ref !== null)
        restoreHistory(harness, byId.get(row.harness_ref)?.harness ?? undefined, row.harness_prefix);
      let prompt: Int32Array | null = null;
      if (row.prompt_suffix) {
        const suffix = decodeInt32(row.prompt_suffix);
        const base = row.prompt_ref === null ? null : byId.get(row.prompt_ref)?.context;
        if (row.prompt_ref !== null && !base)
          throw new Error(`corrupt trace: call ${row.id} refers to a missing call ${row.prompt_ref}`);
        prompt = base ? concat(base.subarray(0, row.prompt_prefix), suffix) : suffix;
      }
      const completion = row.completion_ids ? decodeInt32(row.completion_ids) : null;
      byId.set(row.id, { request, harness, context: prompt && completion ? concat(prompt, completion) : null });
      out.push({
        rolloutId: row.rollout_id,
        seq: row.seq,
        protocol: row.protocol,
        stream: row.stream === 1,
        purpose: row.purpose,
        request,
        response: row.response === null ? null : JSON.parse(row.response),
        harness: harness && {
          request: harness,
          response: row.harness_response === null ? null : JSON.parse(row.harness_response),
        },
        promptIds: prompt ? Array.from(prompt) : null,
        completionIds: completion ? Array.from(completion) : null,
        completionLogprobs: row.completion_logprobs ? Array.from(decodeFloat32(row.completion_logprobs)) : null,
        promptTokens: row.prompt_tokens,
        completionTokens: row.completion_tokens,
        status: row.status,
        httpStatus: row.http_status,
        error: row.error,
        latencyMs: row.latency_ms,
        modelVersion: row.model_version,
        finishReason: row.finish_reason,
      });
    }
    return out.sort((a, b) => a.seq - b.seq);
  }

  /**
   * A rollout's calls as merging needs them, without their bodies and without materialising every prompt: each call
   * says which earlier call's prompt + completion its prompt extends (and by what suffix); `promptIds` is built only
   * when read.
   */
  tokenCalls(rolloutId: string): TokenCall[] {
    const rows = this.db
      .prepare(`SELECT id, seq, status, purpose, prompt_ref, prompt_prefix, prompt_suffix, completion_ids,
      completion_logprobs, finish_reason FROM calls WHERE rollout_id = ? ORDER BY id`)
      .all(rolloutId) as CallRow[];
    const byId = new Map<number, TokenCall>();
    const out: TokenCall[] = [];
    for (const row of rows) {
      const suffix = row.prompt_suffix ? decodeInt32(row.prompt_suffix) : null;
      const completion = row.completion_ids ? decodeInt32(row.completion_ids) : null;
      const base = row.prompt_ref === null ? undefined : byId.get(row.prompt_ref);
      if (row.prompt_ref !== null && !base)
        throw new Error(`corrupt trace: call ${row.id} refers to a missing call ${row.prompt_ref}`);
      let prompt: Int32Array | null | undefined;
      const call: TokenCall = {
        seq: row.seq,
        status: row.status,
        purpose: row.purpose,
        completionIds: completion,
        completionLogprobs: row.completion_logprobs ? decodeFloat32(row.completion_logprobs) : null,
        finishReason: row.finish_reason,
        extends: base && suffix ? { seq: base.seq, length: row.prompt_prefix, suffix } : undefined,
        get promptIds() {
          if (prompt === undefined) {
            const context =
              base?.promptIds && base.completionIds
                ? concat(base.promptIds as Int32Array, base.completionIds as Int32Array)
                : null;
            prompt = suffix ? (context ? concat(context.subarray(0, row.prompt_prefix), suffix) : suffix) : null;
          }
          return prompt;
        },
      };
      byId.set(row.id, call);
      out.push(call);
    }
    return out.sort((a, b) => a.seq - b.seq);
  }

  /** Bytes the rollout's calls occupy in their columns (for storage checks and `traces show`). */
  storedBytes(rolloutId: string): number {
    const row = this.db
      .prepare(
        `SELECT sum(length(request) + coalesce(length(response), 0) + coalesce(length(prompt_suffix), 0)
      + coalesce(length(completion_ids), 0) + coalesce(length(completion_logprobs), 0)
      + coalesce(length(harness_request), 0) + coalesce(length(harness_response), 0)) AS b ` +
          'FROM calls WHERE rollout_id = ?',
      )
      .get(rolloutId) as { b: number | null };
    return row.b ?? 0;
  }
}

function bestHistoryRef(
  history: History | null,
  recents: Recent[],
  of: (r: Recent) => History | null,
): { ref: number | null; prefix: number } {
  let best = { ref: null as number | null, prefix: 0 };
  if (!history) return best;
  for (const r of recents) {
    const h = of(r);
    if (!h || h.key !== history.key) continue;
    const earlier = h.key === 'prompt' ? h.text : h.items;
    const prefix =
      history.key === 'prompt'
        ? commonPrefix(history.text, earlier as string)
        : commonPrefix(history.items, earlier as string[]);
    if (prefix > best.prefix) best = { ref: r.id, prefix };
    // Extending a whole earlier history is the agent-loop case: no older call can do better in practice.
    if (prefix === earlier.length) break;
  }
  return best;
}

/**
 * The items a remembered call keeps in the window: the shared prefix as the earlier call's strings, so the window holds
 * each message once, and the rest as strings of their own (items taken from the request's text are slices of it, and
 * would keep the whole text alive).
 */
function keepItems(history: History | null, earlier: History | null, prefix: number): void {
  if (!history || history.key === 'prompt') return;
  const shared = earlier && earlier.key !== 'prompt' ? earlier.items : [];
  for (let i = 0; i < history.items.length; i++)
    // Concatenated, then sliced: V8 flattens the concatenation into a new string, which the slice then refers to.
    history.items[i] = i < prefix && i < shared.length ? shared[i] : ` ${history.items[i]}`.slice(1);
}

function bestPromptRef(prompt: Int32Array, recents: Recent[]): { ref: number | null; prefix: number } {
  let best = { ref: null as number | null, prefix: 0 };
  for (const r of recents) {
    if (!r.context) continue;
    const [before, after] = r.context;
    let prefix = commonTokenPrefix(prompt, before);
    if (prefix === before.length) prefix += commonTokenPrefix(prompt.subarray(prefix), after);
    if (prefix > best.prefix) best = { ref: r.id, prefix };
    if (prefix === before.length + after.length || prefix === prompt.length) break;
  }
  return best;
}

function restoreHistory(
  request: Record<string, unknown>,
  base: Record<string, unknown> | undefined,
  prefix: number,
): void {
  if (!base) throw new Error(`corrupt trace: a call refers to a missing earlier call`);
  const key = itemsKeyOf(request);
  if (key) {
    request[key] = [...(base[key] as unknown[]).slice(0, prefix), ...(request[key] as unknown[])];
  } else if (typeof request.prompt === 'string') {
    request.prompt = (base.prompt as string).slice(0, prefix) + request.prompt;
  }
}

function concat(a: Int32Array, b: Int32Array): Int32Array {
  const out = new Int32Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** Ids as an Int32Array: the gateway's scanner already gives one (token-fields.ts); other callers give arrays. */
const int32 = (ids: ArrayLike<number>): Int32Array => (ids instanceof Int32Array ? ids : Int32Array.from(ids));
