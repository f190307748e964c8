import { AlightError, ExitCode } from '../errors.js';
import type { CallPurpose } from '../store/calls.js';
import type { Store } from '../store/store.js';

/** One rollout as `alight traces export` writes it (docs/design.md#trace-export). */
export interface RolloutTrace {
  rollout_id: string;
  run: string;
  task_id: string | null;
  group_id: string | null;
  attempt: number;
  mode: string;
  state: string;
  exit_code: number | null;
  error: string | null;
  reward: number | null;
  /** Every reward row, oldest first (the last is `reward`): source, value, reason (a judge's explanation). */
  rewards: { value: number; reason: string | null; source: string }[];
  calls: CallTrace[];
}

export interface CallTrace {
  seq: number;
  protocol: string;
  stream: boolean;
  /** What the call was for: `main` (the agent's turns), or one of a harness's own side calls (train.batch.purposes). */
  purpose: CallPurpose;
  request: Record<string, unknown>;
  response: Record<string, unknown> | null;
  /** Where the gateway translated (Anthropic Messages, Responses): what the harness sent and received; else null. */
  harness: { request: Record<string, unknown>; response: Record<string, unknown> | null } | null;
  prompt_token_ids: number[] | null;
  completion_token_ids: number[] | null;
  completion_logprobs: number[] | null;
  status: string;
  http_status: number | null;
  error: string | null;
  latency_ms: number;
  model_version: number | null;
  finish_reason: string | null;
}

export function rolloutTrace(store: Store, rolloutId: string): RolloutTrace {
  const r = store.getRollout(rolloutId);
  if (!r) throw new AlightError(`no rollout ${rolloutId}`, ExitCode.input);
  return {
    rollout_id: r.id,
    run: r.run,
    task_id: r.task_id,
    group_id: r.group_id,
    attempt: r.attempt,
    mode: r.mode,
    state: r.state,
    exit_code: r.exit_code,
    error: r.error,
    reward: store.lastReward(r.id)?.value ?? null,
    rewards: store.rewards(r.id),
    calls: store.calls.list(r.id).map((c) => ({
      seq: c.seq,
      protocol: c.protocol,
      stream: c.stream,
      purpose: c.purpose ?? 'main',
      request: c.request,
      response: c.response,
      harness: c.harness,
      prompt_token_ids: c.promptIds,
      completion_token_ids: c.completionIds,
      completion_logprobs: c.completionLogprobs,
      status: c.status,
      http_status: c.httpStatus,
      error: c.error,
      latency_ms: Math.round(c.latencyMs * 100) / 100,
      model_version: c.modelVersion,
      finish_reason: c.finishReason,
    })),
  };
}
