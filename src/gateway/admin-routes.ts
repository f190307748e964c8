import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { upstreamKinds } from '../config/schema.js';
import { smallBody as adminBody, HttpError, type Params, parseBody, Router, readJson, sendJson } from '../http.js';
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

/** One admin request: the gateway, the request and its answer, the route's parameters. */
interface AdminCall {
  state: GatewayState;
  req: IncomingMessage;
  res: ServerResponse;
  params: Params;
}

const adminRoutes = new Router<(c: AdminCall) => Promise<void> | void>()
  .post('/api/rollouts', createRollout)
  .get('/api/rollouts/{id}', ({ state, params, res }) => {
    const rollout = existing(state, params.id);
    const reward = state.store.lastReward(params.id)?.value ?? null;
    sendJson(res, 200, { ...rollout, reward, calls: state.store.calls.count(params.id) });
  })
  .on('PATCH', '/api/rollouts/{id}', patchRolloutRoute)
  .get('/api/rollouts/{id}/trace', ({ state, params, res }) => {
    existing(state, params.id);
    sendJson(res, 200, rolloutTrace(state.store, params.id));
  })
  .post('/api/endpoints', async ({ state, req, res }) => {
    const body = parseBody(endpoint, await readJson(req, adminBody));
    const { url, version, kind } = body;
    sendJson(res, 200, state.endpoints.upsert({ url, model: body.model ?? null, version, kind }));
  })
  .post('/api/pause', ({ state, res }) => {
    state.pause();
    sendJson(res, 200, state.snapshot());
  })
  .post('/api/resume', ({ state, res }) => {
    state.resume();
    sendJson(res, 200, state.snapshot());
  })
  .get('/api/state', ({ state, res }) => sendJson(res, 200, state.snapshot()));

/** Routes under `/api/`, already authorised by the admin key. */
export async function handleAdmin(
  state: GatewayState,
  path: string,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const method = req.method ?? 'GET';
  const found = adminRoutes.find(method, path);
  if (!found) throw new HttpError(404, `no route ${method} ${path}`, 'not_found_error');
  return found.handler({ state, req, res, params: found.params });
}

/** `POST /api/rollouts`: a new rollout, its token, and the base URLs its harness calls. */
async function createRollout({ state, req, res }: AdminCall): Promise<void> {
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

/** `PATCH /api/rollouts/{id}`: a move to another state (409 for one the rollout cannot make). */
async function patchRolloutRoute({ state, params, req, res }: AdminCall): Promise<void> {
  existing(state, params.id);
  const body = parseBody(patchRollout, await readJson(req, adminBody));
  try {
    sendJson(
      res,
      200,
      state.rollouts.transition(params.id, body.state, { exitCode: body.exit_code, error: body.error }),
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
