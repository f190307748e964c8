import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { decodePathPart, HttpError, parseBody, readJson, sendJson, smallBody } from '../http.js';
import { isTerminal } from '../rollouts/state.js';
import type { RolloutRow } from '../store/store.js';
import { countGeminiTokens, countTokens } from './count-tokens.js';
import { handleModelCall } from './model-call.js';
import { type Protocol, protocolFor } from './protocols/index.js';
import type { GatewayState } from './state.js';

const rewardBody = z.object({ value: z.number().finite(), reason: z.string().optional() });
const eventBody = z.object({ type: z.string().min(1), data: z.record(z.string(), z.unknown()).default({}) });

/** Routes under `/r/{token}/`: the token is the only credential and reaches its own rollout alone. */
export async function handleAgent(
  state: GatewayState,
  path: string,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const match = /^\/r\/([^/]+)\/(.*)$/.exec(path) ?? /^\/r\/([^/]+)()$/.exec(path);
  if (!match) throw new HttpError(404, `no route ${req.method} ${path}`, 'not_found_error');
  const rest = withApiVersion(match[2]);
  const protocol = req.method === 'POST' ? protocolAt(rest) : undefined;
  // Errors reach each harness in its protocol's shape (count_tokens is Anthropic's too, countTokens Gemini's).
  const shape =
    protocol ??
    (rest.startsWith('v1/messages') ? protocolFor('messages') : undefined) ??
    (geminiMethod.test(rest) ? protocolFor('models:generateContent') : undefined);
  try {
    return await agentRoute(state, decodePathPart(match[1]), rest, protocol, req, res);
  } catch (err) {
    if (!shape || !(err instanceof HttpError) || res.headersSent) throw err;
    sendJson(res, err.status, shape.errorBody(err.status, err.message, err.type), err.headers);
  }
}

/** Gemini's `v1beta/models/{model}:<method>` (the model is the endpoint's, whatever the path names). */
const geminiMethod = /^v1(?:beta)?\/models\/[^/:?]+:(\w+)(?:\?.*)?$/;

/** The protocol a POST path speaks: `v1/<path>` by its path, Gemini's by its method. */
function protocolAt(rest: string): Protocol | undefined {
  const method = geminiMethod.exec(rest)?.[1];
  if (method) return protocolFor(`models:${method}`);
  return rest.startsWith('v1/') ? protocolFor(rest.slice(3)) : undefined;
}

/**
 * The API's path with its `v1/`, however the client joined its base URL: Anthropic's SDKs and Claude Code append
 * `/v1/messages` to ANTHROPIC_BASE_URL, the AI SDK's Anthropic provider takes that base as the API root and appends only
 * `/messages` (opencode, Kilo). Both reach the same routes.
 */
function withApiVersion(rest: string): string {
  return /^(messages|chat\/completions|completions|responses|models)(\/|\?|$)/.test(rest) ? `v1/${rest}` : rest;
}

async function agentRoute(
  state: GatewayState,
  token: string,
  rest: string,
  protocol: Protocol | undefined,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const rollout = live(state, token);
  if (protocol) return modelCall(state, token, rollout, protocol, req, res);
  // Claude Code checks that its base URL answers before it starts.
  if ((req.method === 'HEAD' || req.method === 'GET') && rest === '') return sendJson(res, 200, { ok: true });
  if (req.method === 'GET' && rest === 'v1/models') {
    const ids = [...new Set(state.endpoints.all().map((e) => e.model ?? 'alight'))];
    return sendJson(res, 200, { object: 'list', data: ids.map((id) => ({ id, object: 'model', owned_by: 'alight' })) });
  }
  const named = req.method === 'GET' ? /^v1\/models\/([^/?]+)$/.exec(rest) : null;
  // Any name the harness uses reaches the served model (the gateway pins it), so any name is answered.
  if (named) return sendJson(res, 200, { id: decodePathPart(named[1]), object: 'model', owned_by: 'alight' });
  const retrieved = req.method === 'GET' ? /^v1\/responses\/([^/?]+)$/.exec(rest) : null;
  // The openai SDK's responses.retrieve: an answer this rollout was given (the gateway keeps them for
  // previous_response_id).
  if (retrieved) return retrieve(state, rollout.id, decodePathPart(retrieved[1]), res);
  if (req.method === 'POST' && rest === 'v1/messages/count_tokens') {
    const body = await readJson(req, state.context.bodyLimit);
    const endpoint = state.endpoints.pick(rollout.id);
    const native = endpoint.kind !== 'vllm' && state.context.nativeProtocols;
    const counted = await countTokens(
      state.context.upstream,
      endpoint,
      body,
      state.context.memories.for(rollout.id),
      AbortSignal.timeout(30_000),
      native,
    );
    return sendJson(res, 200, counted);
  }
  if (req.method === 'POST' && geminiMethod.exec(rest)?.[1] === 'countTokens') {
    const body = await readJson(req, state.context.bodyLimit);
    const endpoint = state.endpoints.pick(rollout.id);
    const memory = state.context.memories.for(rollout.id);
    return sendJson(
      res,
      200,
      await countGeminiTokens(state.context.upstream, endpoint, body, memory, AbortSignal.timeout(30_000)),
    );
  }
  if (req.method === 'POST' && rest === 'reward') {
    const { value, reason } = parseBody(rewardBody, await readJson(req, smallBody));
    state.store.addReward(rollout.id, value, reason ?? null, 'harness');
    return sendJson(res, 200, { ok: true });
  }
  if (req.method === 'POST' && rest === 'events') {
    const { type, data } = parseBody(eventBody, await readJson(req, smallBody));
    state.store.addEvent(rollout.id, type, data);
    return sendJson(res, 200, { ok: true });
  }
  // A harness that speaks a protocol the gateway does not serve ends with no calls: the event says what it asked for
  // (the path without its query string, which could carry a secret).
  state.store.addEvent(rollout.id, 'unserved-route', { method: req.method, path: `/${rest.split('?')[0]}` });
  const why = rest.startsWith('v1/embeddings')
    ? ': the gateway serves the policy generating, not embeddings (nothing to train on); give the embedding client ' +
      'an embedding server of its own'
    : '';
  throw new HttpError(404, `no route ${req.method} /r/<token>/${rest.split('?')[0]}${why}`, 'not_found_error');
}

function retrieve(state: GatewayState, rolloutId: string, id: string, res: ServerResponse): void {
  const earlier = state.context.memories.for(rolloutId).earlier(id);
  if (!earlier) throw new HttpError(404, `No response found with id '${id}' in this rollout.`, 'invalid_request_error');
  sendJson(res, 200, earlier.response);
}

async function modelCall(
  state: GatewayState,
  token: string,
  rollout: RolloutRow,
  protocol: Protocol,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  if (state.paused) {
    if (!(await state.holdUntilResumed())) {
      throw new HttpError(429, 'the gateway is paused (weights are being updated); retry shortly', 'rate_limit_error', {
        'retry-after': '1',
      });
    }
    // While held, the harness may have gone (killed, timed out) and its rollout ended: look again.
    if (res.destroyed || req.socket.destroyed) return;
    rollout = live(state, token);
  }
  if (rollout.state === 'queued') state.rollouts.transition(rollout.id, 'running');
  const abort = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) abort.abort(new Error('the harness disconnected before the answer was complete'));
  });
  return state.abortable(abort, rollout.id, () =>
    handleModelCall(state.context, rollout, state.nextCallSeq(rollout.id), protocol, req, res, abort.signal),
  );
}

/** The token's rollout, if it may still call: an unknown token is 401, an ended rollout 403. */
function live(state: GatewayState, token: string): RolloutRow {
  const rollout = state.rollouts.resolve(token);
  if (!rollout) throw new HttpError(401, 'unknown rollout token', 'authentication_error');
  if (isTerminal(rollout.state)) {
    throw new HttpError(
      403,
      `rollout ${rollout.id} has ended (${rollout.state}); its token no longer works`,
      'permission_error',
    );
  }
  return rollout;
}
