import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorMessage } from '../errors.js';
import { HttpError, readJson, sendJson } from '../http.js';
import { isTerminal } from '../rollouts/state.js';
import type { CallStatus } from '../store/calls.js';
import { encodeRequest } from '../store/request-json.js';
import type { RolloutRow, Store } from '../store/store.js';
import type { Endpoints } from './endpoints.js';
import type { Protocol } from './protocols/index.js';
import { type Outcome, streamCall, wholeCall } from './relay.js';
import type { RolloutMemories } from './rollout-memory.js';
import type { UpstreamClient } from './upstream.js';

/** Progress of one recorded call, for the UI. */
export interface CallEvent {
  rolloutId: string;
  seq: number;
  status: CallStatus;
  error: string | null;
  promptTokens: number | null;
  completionTokens: number | null;
  latencyMs: number;
}

export interface CallContext {
  store: Store;
  upstream: UpstreamClient;
  endpoints: Endpoints;
  memories: RolloutMemories;
  /** Relay Anthropic Messages and Responses unchanged to an openai-compatible upstream that serves them. */
  nativeProtocols: boolean;
  bodyLimit: number;
  onCall(event: CallEvent): void;
}

/**
 * One model call: translate or forward, relay, record. `signal` aborts it when the harness disconnects or the gateway
 * stops. The call's `seq` is taken when the call arrives, in the same tick as the check that its rollout is live.
 */
export async function handleModelCall(
  ctx: CallContext,
  rollout: RolloutRow,
  seq: number,
  spoken: Protocol,
  req: IncomingMessage,
  res: ServerResponse,
  signal: AbortSignal,
): Promise<void> {
  const started = performance.now();
  const harness = await readJson(req, ctx.bodyLimit);
  const invalid = spoken.invalid(harness);
  if (invalid) throw new HttpError(400, invalid);
  const endpoint = ctx.endpoints.pick(rollout.id);
  const protocol = endpoint.kind !== 'vllm' && ctx.nativeProtocols && spoken.native ? spoken.native : spoken;
  const up = protocol.upstream(harness, endpoint.kind, ctx.memories.for(rollout.id));
  if (endpoint.model) up.body.model = endpoint.model;
  const request = encodeRequest(up.body);
  const relayed = {
    upstream: ctx.upstream,
    endpoint,
    protocol,
    path: up.path,
    payload: request.json,
    signal,
    res,
    view: () => protocol.view(harness, up.body, endpoint.kind),
  };
  const outcome = up.body.stream === true ? await streamCall(relayed) : await wholeCall(relayed);
  const x = outcome.extracted;
  const answer =
    protocol.translated && x && outcome.status === 'ok' ? protocol.translated.answer(harness, x.response) : null;
  const latencyMs = performance.now() - started;
  let reply = outcome.reply;
  // A harness gone before the answer was stored never got it whole, however the upstream ended.
  const { status, error } =
    signal.aborted && outcome.status === 'ok'
      ? { status: 'error' as const, error: errorMessage(signal.reason) }
      : outcome;
  let id: number | null = null;
  try {
    id = ctx.store.calls.add(
      {
        rolloutId: rollout.id,
        seq,
        protocol: protocol.name,
        stream: up.body.stream === true,
        request,
        response: x?.response ?? null,
        harness: protocol.translated ? { request: encodeRequest(harness), response: answer } : null,
        promptIds: x?.promptIds ?? null,
        completionIds: x?.completionIds ?? null,
        completionLogprobs: x?.completionLogprobs ?? null,
        promptTokens: x?.promptTokens ?? null,
        completionTokens: x?.completionTokens ?? null,
        status,
        httpStatus: outcome.httpStatus,
        error,
        latencyMs,
        modelVersion: outcome.version ?? endpoint.version,
        finishReason: x?.finishReason ?? null,
      },
      !isTerminal(rollout.state),
    );
    if (answer && x) ctx.memories.keep(rollout.id, { request: harness, response: answer }, x.response);
  } catch (err) {
    reply = unstored(rollout, seq, protocol, res, err, relayed.view().broken);
  }
  ctx.onCall({
    rolloutId: rollout.id,
    seq,
    status,
    error,
    promptTokens: x?.promptTokens ?? null,
    completionTokens: x?.completionTokens ?? null,
    latencyMs,
  });
  if (signal.aborted) return;
  reply();
  if (id !== null && status === 'ok') watchDelivery(res, () => ctx.store.calls.undelivered(id, undeliveredMessage));
}

const undeliveredMessage = 'the harness dropped the connection with part of the answer unread';
const awaitingNextRequest = new WeakMap<object, () => void>();

/**
 * The answer is written, but written is not read: a harness that aborts a stream after its first chunk, while the rest
 * already sits in the socket's buffers, resets the connection (unread data makes the kernel send RST rather than FIN).
 * Such a close marks the call; the socket's next request (keep-alive) proves the answer was read to its end.
 */
function watchDelivery(res: ServerResponse, lost: () => void): void {
  const socket = res.socket;
  if (!socket) return;
  if (socket.destroyed) {
    lost(); // gone before the end was written
    return;
  }
  const onClose = (hadError: boolean): void => {
    awaitingNextRequest.delete(socket);
    if (hadError || !res.writableFinished) lost();
  };
  socket.once('close', onClose);
  awaitingNextRequest.set(socket, () => socket.off('close', onClose));
}

/** Called for every request: the previous answer on its connection was read whole. */
export function nextRequestOn(req: IncomingMessage): void {
  awaitingNextRequest.get(req.socket)?.();
  awaitingNextRequest.delete(req.socket);
}

/** The harness must not believe a call was recorded when it was not. */
function unstored(
  rollout: RolloutRow,
  seq: number,
  protocol: Protocol,
  res: ServerResponse,
  err: unknown,
  broken: (message: string) => string,
): Outcome['reply'] {
  const message = `the gateway could not store this call: ${errorMessage(err)}`;
  process.stderr.write(`alight gateway: call ${seq} of ${rollout.id}: ${message}\n`);
  return () =>
    res.headersSent ? res.end(broken(message)) : sendJson(res, 500, protocol.errorBody(500, message, 'server_error'));
}
