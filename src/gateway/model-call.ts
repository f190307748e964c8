import { once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import { errorMessage } from '../errors.js';
import type { CallStatus } from '../store/calls.js';
import { encodeRequest } from '../store/request-json.js';
import type { RolloutRow, Store } from '../store/store.js';
import { isTerminal } from '../rollouts/state.js';
import type { Endpoint, Endpoints } from './endpoints.js';
import { errorBody, HttpError, readJson, sendJson } from '../http.js';
import type { Extracted, Protocol } from './protocols/index.js';
import { SseSplitter, sseData } from './sse.js';
import { readWhole, UpstreamStatusError, versionOf, type UpstreamClient } from './upstream.js';

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
  bodyLimit: number;
  onCall(event: CallEvent): void;
}

interface Outcome {
  status: CallStatus;
  httpStatus: number | null;
  error: string | null;
  extracted: Extracted | null;
  /** The weights version the upstream reported, when it reports one. */
  version?: number | null;
  /** Sends what is left to the harness; runs after the call is stored, so a call the harness saw end is never lost. */
  reply(): void;
}

class MidStreamError extends Error {}

const sseHeaders = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' };

/**
 * One model call: forward, relay, record. `signal` aborts it when the harness disconnects or the gateway stops.
 * The call's `seq` is taken when the call arrives, in the same tick as the check that its rollout is live.
 */
export async function handleModelCall(ctx: CallContext, rollout: RolloutRow, seq: number, protocol: Protocol,
  req: IncomingMessage, res: ServerResponse, signal: AbortSignal): Promise<void> {
  const started = performance.now();
  const body = await readJson(req, ctx.bodyLimit);
  const invalid = protocol.invalid(body);
  if (invalid) throw new HttpError(400, invalid);
  const endpoint = ctx.endpoints.pick(rollout.id);
  if (endpoint.model) body.model = endpoint.model;
  if (endpoint.kind === 'vllm') protocol.requestTokens(body);
  // A fresh view per upstream attempt: views keep state across a stream's chunks, and a failed attempt is retried.
  const view = (): View => (endpoint.kind === 'vllm' ? protocol.harnessView?.(body) ?? null : null);
  const stream = body.stream === true;
  const request = encodeRequest(body);

  const outcome = stream
    ? await streamCall(ctx, endpoint, protocol, request.json, signal, res, view)
    : await wholeCall(ctx, endpoint, protocol, request.json, signal, res, view);

  const x = outcome.extracted;
  const latencyMs = performance.now() - started;
  let reply = outcome.reply;
  try {
    ctx.store.calls.add({
      rolloutId: rollout.id, seq, protocol: protocol.name, stream, request, response: x?.response ?? null,
      promptIds: x?.promptIds ?? null, completionIds: x?.completionIds ?? null, completionLogprobs: x?.completionLogprobs ?? null,
      promptTokens: x?.promptTokens ?? null, completionTokens: x?.completionTokens ?? null,
      status: outcome.status, httpStatus: outcome.httpStatus, error: outcome.error, latencyMs,
      modelVersion: outcome.version ?? endpoint.version, finishReason: x?.finishReason ?? null,
    }, !isTerminal(rollout.state));
  } catch (err) {
    // The harness must not believe a call was recorded when it was not.
    const message = `the gateway could not store this call: ${errorMessage(err)}`;
    process.stderr.write(`alight gateway: call ${seq} of ${rollout.id}: ${message}\n`);
    reply = () => (res.headersSent ? res.end(sseData(errorBody(500, message, 'server_error'))) : sendJson(res, 500, errorBody(500, message, 'server_error')));
  }
  ctx.onCall({ rolloutId: rollout.id, seq, status: outcome.status, error: outcome.error,
    promptTokens: x?.promptTokens ?? null, completionTokens: x?.completionTokens ?? null, latencyMs });
  if (!signal.aborted) reply();
}

/** The harness's view of an answer when the gateway's request changed it (Protocol.harnessView). */
type View = ((answer: Record<string, unknown>) => Record<string, unknown>) | null;
type ViewOf = () => View;

async function wholeCall(ctx: CallContext, endpoint: Endpoint, protocol: Protocol, payload: string,
  signal: AbortSignal, res: ServerResponse, viewOf: ViewOf): Promise<Outcome> {
  let answer: { status: number; text: string; version: number | null };
  try {
    answer = await ctx.upstream.post(endpoint, protocol.path, payload, signal, readWhole);
  } catch (err) {
    return failed(err, signal, res);
  }
  let extracted: Extracted;
  let parsed: Record<string, unknown>;
  try {
    const value: unknown = JSON.parse(answer.text);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('not an object');
    parsed = value as Record<string, unknown>;
    extracted = protocol.extract(parsed);
  } catch {
    return errorOutcome(res, 502, `the upstream answered with invalid JSON: ${answer.text.slice(0, 200)}`);
  }
  const view = viewOf();
  const text = view ? JSON.stringify(view(parsed)) : answer.text;
  return {
    status: 'ok', httpStatus: answer.status, error: null, extracted, version: answer.version,
    reply: () => res.writeHead(answer.status, { 'content-type': 'application/json' }).end(text),
  };
}

async function streamCall(ctx: CallContext, endpoint: Endpoint, protocol: Protocol, payload: string,
  signal: AbortSignal, res: ServerResponse, viewOf: ViewOf): Promise<Outcome> {
  const assembler = protocol.assembler();
  let relayed = false;
  let sawDone = false;
  let upstreamError: string | null = null;
  let version: number | null = null;

  const relay = async (up: Dispatcher.ResponseData): Promise<void> => {
    if (up.statusCode >= 400) await readWhole(up); // throws the status for the retry loop
    const type = String(up.headers['content-type'] ?? '');
    if (!type.includes('text/event-stream')) {
      await up.body.dump();
      throw new HttpError(502, `the upstream answered a streaming request with ${type || 'no content type'}, not an event stream`, 'upstream_error');
    }
    version = versionOf(up.headers);
    const splitter = new SseSplitter();
    const view = viewOf();
    try {
      for await (const bytes of up.body as AsyncIterable<Buffer>) {
        // Everything one read brought goes to the harness in one write: per-event writes cost more than parsing.
        let out = '';
        for (const event of splitter.push(bytes)) {
          if (event.data === '[DONE]') { sawDone = true; continue; }
          const chunk = event.data ? parseChunk(event.data) : null;
          if (chunk?.error) upstreamError = errorText(chunk.error);
          else if (chunk) assembler.push(chunk);
          out += view && chunk && !chunk.error ? `data: ${JSON.stringify(view(chunk))}\n\n` : event.raw;
        }
        if (!out) continue;
        if (!relayed) { res.writeHead(200, sseHeaders); relayed = true; }
        if (!res.write(out)) await once(res, 'drain', { signal });
      }
    } catch (err) {
      // Before the first byte reached the harness the retry loop may try again; after it, the stream is spoiled.
      if (!relayed) throw err;
      throw new MidStreamError(errorMessage(err));
    }
  };

  try {
    await ctx.upstream.post(endpoint, protocol.path, payload, signal, relay);
  } catch (err) {
    if (!relayed || signal.aborted) return failed(err, signal, res, assembler.result());
    return streamBroken(res, `the upstream failed mid-stream: ${errorMessage(err)}`, assembler.result());
  }
  if (upstreamError) return { status: 'error', httpStatus: 200, error: upstreamError, extracted: assembler.result(), version, reply: () => res.end() };
  if (!sawDone && !assembler.finished()) {
    return streamBroken(res, 'the upstream ended the stream before the answer was finished', assembler.result());
  }
  return {
    status: 'ok', httpStatus: 200, error: null, extracted: assembler.result(), version,
    reply: () => {
      if (!relayed) res.writeHead(200, sseHeaders);
      res.end(sawDone ? 'data: [DONE]\n\n' : undefined);
    },
  };
}

function parseChunk(data: string): Record<string, unknown> {
  try {
    const chunk = JSON.parse(data);
    if (typeof chunk === 'object' && chunk !== null) return chunk;
  } catch { /* reported below */ }
  throw new HttpError(502, `the upstream sent an event that is not a JSON object: ${data.slice(0, 200)}`, 'upstream_error');
}

function errorText(error: unknown): string {
  const message = (error as { message?: unknown }).message;
  return `upstream error: ${typeof message === 'string' ? message : JSON.stringify(error)}`;
}

/** After bytes were relayed, an error can only travel as an SSE event; the SDKs raise it as an API error. */
function streamBroken(res: ServerResponse, message: string, extracted: Extracted | null): Outcome {
  return {
    status: 'error', httpStatus: 502, error: message, extracted,
    reply: () => res.end(sseData(errorBody(502, message, 'upstream_error'))),
  };
}

function errorOutcome(res: ServerResponse, status: number, message: string, extracted: Extracted | null = null): Outcome {
  return {
    status: 'error', httpStatus: status, error: message, extracted,
    reply: () => sendJson(res, status, errorBody(status, message, status >= 500 ? 'upstream_error' : 'invalid_request_error')),
  };
}

function failed(err: unknown, signal: AbortSignal, res: ServerResponse, extracted: Extracted | null = null): Outcome {
  if (signal.aborted) return { status: 'error', httpStatus: null, error: errorMessage(signal.reason), extracted, reply: () => res.end() };
  if (err instanceof UpstreamStatusError) {
    return {
      status: 'error', httpStatus: err.status, error: `upstream answered HTTP ${err.status}: ${err.body.slice(0, 500)}`, extracted,
      reply: () => res.writeHead(err.status, {
        'content-type': 'application/json', ...(err.retryAfterS !== null && { 'retry-after': String(err.retryAfterS) }),
      }).end(err.body),
    };
  }
  if (err instanceof HttpError) return errorOutcome(res, err.status, err.message, extracted);
  return errorOutcome(res, 502, `the upstream request failed: ${errorMessage(err)}`, extracted);
}
