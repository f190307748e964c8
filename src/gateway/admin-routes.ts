import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { upstreamKinds } from '../config/schema.js';
import { smallBody as adminBody, decodePathPart, HttpError, parseBody, readJson, sendJson } from '../http.js';
import { rolloutModes, rolloutStates } from '../rollouts/state.js';
import type { RolloutRow } from '../store/store.js';
import { rolloutTrace } from '../traces/export.js';
import type { GatewayState } from './state.js';

const newRollout = z.object({
  run: z.string().min(1).default('default'),
  task_id: z.string().optional(),
  group_id: z.string().optional(),
  attempt: z.number().int().min(0).optional(),
  mode: z.enum(rolloutModes).optional(),
  task: z.unknown().optional(),
});
const patchRollout = z.object({
  state: z.enum(rolloutStates),
  exit_code: z.number().int().nullable().optional(),
  error: z.string().nullable().optional(),
});
const endpoint = z.object({
  url: z.string().url(),
  model: z.string().nullable().optional(),
  version: z.number().int().min(0),
  kind: z.enum(upstreamKinds).default('vllm'),
});

/** Routes under `/api/`, already authorised by the admin key. */
export async function handleAdmin(
  state: GatewayState,
  path: string,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const method = req.method ?? 'GET';
  if (method === 'POST' && path === '/api/rollouts') return createRollout(state, req, res);
  const rolloutMatch = /^\/api\/rollouts\/([^/]+)(\/trace)?$/.exec(path);
  if (rolloutMatch) {
    const id = decodePathPart(rolloutMatch[1]);
    if (rolloutMatch[2]) return rolloutTraceRoute(state, id, method, path, res);
    return rolloutRoute(state, id, method, path, req, res);
  }
  if (method === 'POST' && path === '/api/endpoints') {
    const body = parseBody(endpoint, await readJson(req, adminBody));
    return sendJson(
      res,
      200,
      state.endpoints.upsert({ url: body.url, model: body.model ?? null, version: body.version, kind: body.kind }),
    );
  }
  if (method === 'POST' && path === '/api/pause') {
    state.pause();
    return sendJson(res, 200, state.snapshot());
  }
  if (method === 'POST' && path === '/api/resume') {
    state.resume();
    return sendJson(res, 200, state.snapshot());
  }
  if (method === 'GET' && path === '/api/state') return sendJson(res, 200, state.snapshot());
  throw noRoute(method, path);
}

/** `POST /api/rollouts`: a new rollout, its token, and the base URLs its harness calls. */
async function createRollout(state: GatewayState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = parseBody(newRollout, await readJson(req, adminBody));
  const { rollout, token } = state.rollouts.create({
    run: body.run,
    taskId: body.task_id,
    groupId: body.group_id,
    attempt: body.attempt,
    mode: body.mode,
    task: body.task,
  });
  const base = `${req.headers.host ? `http://${req.headers.host}` : state.url}/r/${token}`;
  return sendJson(res, 201, { rollout_id: rollout.id, token, base_url: base, openai_base_url: `${base}/v1` });
}

/** `GET /api/rollouts/{id}/trace`: the rollout's trace. */
function rolloutTraceRoute(state: GatewayState, id: string, method: string, path: string, res: ServerResponse): void {
  existing(state, id);
  if (method !== 'GET') throw noRoute(method, path);
  sendJson(res, 200, rolloutTrace(state.store, id));
}

/** `GET /api/rollouts/{id}`: the rollout with its reward and call count; `PATCH`: a move to another state. */
async function rolloutRoute(
  state: GatewayState,
  id: string,
  method: string,
  path: string,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const rollout = existing(state, id);
  if (method === 'GET') {
    return sendJson(res, 200, {
      ...rollout,
      reward: state.store.lastReward(id)?.value ?? null,
      calls: state.store.calls.count(id),
    });
  }
  if (method !== 'PATCH') throw noRoute(method, path);
  const body = parseBody(patchRollout, await readJson(req, adminBody));
  try {
    return sendJson(
      res,
      200,
      state.rollouts.transition(id, body.state, { exitCode: body.exit_code, error: body.error }),
    );
  } catch (err) {
    throw new HttpError(409, (err as Error).message);
  }
}

function existing(state: GatewayState, id: string): RolloutRow {
  const rollout = state.rollouts.get(id);
  if (!rollout) throw new HttpError(404, `no rollout ${id}`, 'not_found_error');
  return rollout;
}

const noRoute = (method: string, path: string): HttpError =>
  new HttpError(404, `no route ${method} ${path}`, 'not_found_error');
