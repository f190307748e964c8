import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { errorMessage } from '../errors.js';
import { HttpError, readJsonText, sendJson } from '../http.js';
import { isTerminal } from '../rollouts/state.js';
import type { CallPurpose, CallRecord, CallStatus } from '../store/calls.js';
import { type EncodedRequest, encodeRequest, type ItemsSource, itemsSource } from '../store/request-json.js';
import type { RolloutRow, Store } from '../store/store.js';
import type { Endpoints } from './endpoints.js';
import type { Protocol } from './protocols/index.js';
import { callPurpose } from './purpose.js';
import { type Outcome, type Relayed, readMode, streamCall, wholeCall } from './relay.js';
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
  const { body: harness, text, bytes } = await readJsonText(req, ctx.bodyLimit);
  const invalid = spoken.invalid(harness);
  if (invalid) throw new HttpError(400, invalid);
  const call = upstreamCall(
    ctx,
    rollout,
    seq,
    spoken,
    { harness, source: itemsSource(harness, text, bytes), headers: req.headers },
    res,
    signal,
  );
  const outcome = call.stream ? await streamCall(call) : await wholeCall(call);
  const x = outcome.extracted;
  const { protocol } = call;
  const answer =
    protocol.translated && x && outcome.status === 'ok' ? protocol.translated.answer(harness, x.response) : null;
  const latencyMs = performance.now() - started;
  let reply = outcome.reply;
  // A harness gone before the answer was stored never got it whole, however the upstream ended; an answer whose token
  // values were refused was given to the harness, but cannot be trained on.
  const settled: Settled =
    signal.aborted && outcome.status === 'ok'
      ? { status: 'error' as const, error: errorMessage(signal.reason) }
      : outcome.refused
        ? { status: 'error' as const, error: outcome.refused }
        : outcome;
  let id: number | null = null;
  try {
    id = await ctx.store.commits.add(callRecord(call, outcome, settled, answer, latencyMs), !isTerminal(rollout.state));
    if (answer && x) ctx.memories.keep(rollout.id, { request: harness, response: answer }, x.response);
    else if (protocol.chatAnswers && x && settled.status === 'ok') ctx.memories.keepToolCalls(rollout.id, x.response);
  } catch (err) {
    reply = unstored(call, err);
  }
  // Gone while the call was being committed: stored as answered, it was not.
  const ended = id !== null && settled.status === 'ok' && signal.aborted ? goneWhileStoring(ctx, id, signal) : settled;
  ctx.onCall({
    rolloutId: rollout.id,
    seq,
    status: ended.status,
    error: ended.error,
    promptTokens: x?.promptTokens ?? null,
    completionTokens: x?.completionTokens ?? null,
    latencyMs,
  });
  if (signal.aborted) return;
  reply();
  if (id !== null && ended.status === 'ok') {
    watchDelivery(res, () => ctx.store.calls.undelivered(id, undeliveredMessage));
  }
}

function goneWhileStoring(ctx: CallContext, id: number, signal: AbortSignal): Settled {
  const error = errorMessage(signal.reason);
  ctx.store.calls.undelivered(id, error);
  return { status: 'error', error };
}

/** One model call as it is relayed, then recorded. */
interface ModelCall extends Relayed {
  rollout: RolloutRow;
  seq: number;
  /** The request as the harness sent it. */
  harness: Record<string, unknown>;
  /** Where its history items lie in the text it came as. */
  source: ItemsSource | undefined;
  /** The request sent upstream, encoded as it is stored. */
  request: EncodedRequest;
  stream: boolean;
  purpose: CallPurpose;
}

/** How a call ended, as recorded: an answer the harness left before it was stored is an error. */
type Settled = Pick<Outcome, 'status' | 'error'>;

/** The request to send upstream: to the rollout's endpoint, in the protocol it serves, with the model it pins. */
function upstreamCall(
  ctx: CallContext,
  rollout: RolloutRow,
  seq: number,
  spoken: Protocol,
  { harness, source, headers }: Pick<ModelCall, 'harness' | 'source'> & { headers: IncomingHttpHeaders },
  res: ServerResponse,
  signal: AbortSignal,
): ModelCall {
  const endpoint = ctx.endpoints.pick(rollout.id);
  const protocol = endpoint.kind !== 'vllm' && ctx.nativeProtocols && spoken.native ? spoken.native : spoken;
  const up = protocol.upstream(harness, endpoint.kind, ctx.memories.for(rollout.id));
  if (endpoint.model) up.body.model = endpoint.model;
  const purpose = callPurpose(headers, up.body);
  const request = encodeRequest(up.body, source);
  return {
    upstream: ctx.upstream,
    endpoint,
    protocol,
    path: up.path,
    payload: request.payload,
    signal,
    res,
    view: () => protocol.view(harness, up.body, endpoint.kind),
    promptHint: readMode({ protocol, endpoint }) === 'scan' ? ctx.memories.promptHint(rollout.id) : undefined,
    rollout,
    seq,
    harness,
    source,
    request,
    stream: up.body.stream === true,
    purpose,
  };
}

/** The call as the store keeps it. */
function callRecord(
  call: ModelCall,
  outcome: Outcome,
  settled: Settled,
  answer: Record<string, unknown> | null,
  latencyMs: number,
): CallRecord {
  const x = outcome.extracted;
  return {
    rolloutId: call.rollout.id,
    seq: call.seq,
    protocol: call.protocol.name,
    stream: call.stream,
    purpose: call.purpose,
    request: call.request,
    response: x?.response ?? null,
    harness: call.protocol.translated ? { request: encodeRequest(call.harness, call.source), response: answer } : null,
    promptIds: x?.promptIds ?? null,
    completionIds: x?.completionIds ?? null,
    completionLogprobs: x?.completionLogprobs ?? null,
    promptTokens: x?.promptTokens ?? null,
    completionTokens: x?.completionTokens ?? null,
    status: settled.status,
    httpStatus: outcome.httpStatus,
    error: settled.error,
    latencyMs,
    modelVersion: outcome.version ?? call.endpoint.version,
    finishReason: x?.finishReason ?? null,
  };
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
function unstored(call: ModelCall, err: unknown): Outcome['reply'] {
  const { res, protocol } = call;
  const broken = call.view().broken;
  const message = `the gateway could not store this call: ${errorMessage(err)}`;
  process.stderr.write(`alight gateway: call ${call.seq} of ${call.rollout.id}: ${message}\n`);
  return () =>
    res.headersSent ? res.end(broken(message)) : sendJson(res, 500, protocol.errorBody(500, message, 'server_error'));
}
