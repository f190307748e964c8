import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { decodePathPart, HttpError, type Params, parseBody, Router, readJson, sendJson, smallBody } from '../http.js';
import { putReward } from '../rewards/index.js';
import { isTerminal } from '../rollouts/state.js';
import type { RolloutRow } from '../store/store.js';
import { countGeminiTokens, countTokens } from './count-tokens.js';
import { handleModelCall } from './model-call.js';
import { type Protocol, protocols } from './protocols/index.js';
import { apiPaths } from './protocols/types.js';
import type { GatewayState } from './state.js';

const rewardBody = z.object({ value: z.number().finite(), reason: z.string().optional() });
const eventBody = z.object({ type: z.string().min(1), data: z.record(z.string(), z.unknown()).default({}) });

/** One request under `/r/{token}/`: the gateway, the rollout the token may still call for, the route's parameters. */
interface AgentCall {
  state: GatewayState;
  token: string;
  rollout: RolloutRow;
  req: IncomingMessage;
  res: ServerResponse;
  params: Params;
}

/** A route's handler, and the protocol whose shape its errors take (count_tokens is Anthropic's, countTokens Gemini's). */
interface AgentRoute {
  handle(c: AgentCall): Promise<void> | void;
  shape?: Protocol;
}

const agentRoutes = new Router<AgentRoute>();
const on = (method: string | string[], paths: readonly string[], route: AgentRoute): void => {
  for (const path of paths) agentRoutes.on(method, path, route);
};
// Every protocol where it says harnesses POST it (v1beta/models/{model}:… for Gemini: the model is the endpoint's,
// whatever the path names).
for (const protocol of Object.values(protocols))
  on('POST', protocol.routes, { handle: (c) => modelCall(c, protocol), shape: protocol });
// Claude Code checks that its base URL answers before it starts.
on(['GET', 'HEAD'], [''], { handle: ({ res }) => sendJson(res, 200, { ok: true }) });
on('GET', apiPaths('models'), { handle: ({ state, res }) => modelList(state, res) });
// Any name the harness uses reaches the served model (the gateway pins it), so any name is answered.
on('GET', apiPaths('models/{name}'), {
  handle: ({ params, res }) => sendJson(res, 200, { id: params.name, object: 'model', owned_by: 'alight' }),
});
// The openai SDK's responses.retrieve: an answer this rollout was given (kept for previous_response_id).
on('GET', apiPaths('responses/{id}'), {
  handle: ({ state, rollout, params, res }) => retrieve(state, rollout.id, params.id, res),
});
on('POST', apiPaths('messages/count_tokens'), { handle: anthropicCount, shape: protocols.messages });
on('POST', ['v1beta/models/{model}:countTokens', 'v1/models/{model}:countTokens'], {
  handle: geminiCount,
  shape: protocols.gemini,
});
on('POST', ['reward'], {
  handle: async ({ state, rollout, req, res }) => {
    const { value, reason } = parseBody(rewardBody, await readJson(req, smallBody));
    putReward(state.store, rollout.id, 'harness', value, reason ?? null);
    sendJson(res, 200, { ok: true });
  },
});
on('POST', ['events'], {
  handle: async ({ state, rollout, req, res }) => {
    const { type, data } = parseBody(eventBody, await readJson(req, smallBody));
    state.store.addEvent(rollout.id, type, data);
    sendJson(res, 200, { ok: true });
  },
});

/** Routes under `/r/{token}/`: the token is the only credential and reaches its own rollout alone. */
export async function handleAgent(
  state: GatewayState,
  path: string,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const match = /^\/r\/([^/]+)(?:\/(.*))?$/.exec(path);
  if (!match) throw new HttpError(404, `no route ${req.method} ${path}`, 'not_found_error');
  const token = decodePathPart(match[1]);
  const rest = match[2] ?? '';
  const found = agentRoutes.find(req.method ?? 'GET', rest);
  try {
    const rollout = live(state, token);
    if (!found) return unserved(state, rollout.id, req.method ?? 'GET', rest);
    return await found.handler.handle({ state, token, rollout, req, res, params: found.params });
  } catch (err) {
    // Errors reach each harness in its protocol's shape.
    const shape = found?.handler.shape;
    if (!shape || !(err instanceof HttpError) || res.headersSent) throw err;
    sendJson(res, err.status, shape.errorBody(err.status, err.message, err.type), err.headers);
  }
}

function modelList(state: GatewayState, res: ServerResponse): void {
  const ids = [...new Set(state.endpoints.all().map((e) => e.model ?? 'alight'))];
  sendJson(res, 200, { object: 'list', data: ids.map((id) => ({ id, object: 'model', owned_by: 'alight' })) });
}

async function anthropicCount({ state, rollout, req, res }: AgentCall): Promise<void> {
  const body = await readJson(req, state.context.bodyLimit);
  const endpoint = state.endpoints.pick(rollout.id);
  const native = endpoint.kind !== 'vllm' && state.context.nativeProtocols;
  const memory = state.context.memories.for(rollout.id);
  const counted = await countTokens(
    state.context.upstream,
    endpoint,
    body,
    memory,
    AbortSignal.timeout(30_000),
    native,
  );
  sendJson(res, 200, counted);
}

async function geminiCount({ state, rollout, req, res }: AgentCall): Promise<void> {
  const body = await readJson(req, state.context.bodyLimit);
  const endpoint = state.endpoints.pick(rollout.id);
  const memory = state.context.memories.for(rollout.id);
  const counted = await countGeminiTokens(state.context.upstream, endpoint, body, memory, AbortSignal.timeout(30_000));
  sendJson(res, 200, counted);
}

/**
 * A harness that speaks a protocol the gateway does not serve ends with no calls: the event says what it asked for
 * (the path without its query string, which could carry a secret).
 */
function unserved(state: GatewayState, rolloutId: string, method: string, rest: string): never {
  state.store.addEvent(rolloutId, 'unserved-route', { method, path: `/${withVersion(rest)}` });
  const why = /^(v1\/)?embeddings/.test(rest)
    ? ': the gateway serves the policy generating, not embeddings (nothing to train on); give the embedding client ' +
      'an embedding server of its own'
    : '';
  throw new HttpError(404, `no route ${method} /r/<token>/${withVersion(rest)}${why}`, 'not_found_error');
}

/** The path as the API names it, however the client joined its base URL (the AI SDK's Anthropic provider drops `v1/`). */
const withVersion = (rest: string): string =>
  /^(messages|chat\/completions|completions|responses|models|embeddings)(\/|$)/.test(rest) ? `v1/${rest}` : rest;

function retrieve(state: GatewayState, rolloutId: string, id: string, res: ServerResponse): void {
  const earlier = state.context.memories.for(rolloutId).earlier(id);
  if (!earlier) throw new HttpError(404, `No response found with id '${id}' in this rollout.`, 'invalid_request_error');
  sendJson(res, 200, earlier.response);
}

async function modelCall({ state, token, rollout, req, res }: AgentCall, protocol: Protocol): Promise<void> {
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
