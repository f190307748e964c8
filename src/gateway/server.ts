import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { GatewayConfig, UpstreamConfig } from '../config/schema.js';
import { AlightError, ExitCode, errorMessage } from '../errors.js';
import { Rollouts } from '../rollouts/service.js';
import type { Store } from '../store/store.js';
import { handleAdmin, stateOf } from './admin-routes.js';
import { handleAgent } from './agent-routes.js';
import { nextRequestOn } from './model-call.js';
import { Endpoints } from './endpoints.js';
import { hasBearer, HttpError, listen, sendError, sendJson } from '../http.js';
import type { CallContext, CallEvent } from './model-call.js';
import { RolloutMemories } from './rollout-memory.js';
import { UpstreamClient } from './upstream.js';

const minAdminKeyLength = 16;

export interface GatewayOptions {
  store: Store;
  gateway: GatewayConfig;
  upstream: UpstreamConfig;
  adminKey: string;
  /** The upstream API key, read from the env var the config names; sent upstream, never stored. */
  upstreamApiKey?: string;
  /** While paused, hold a model call this long for the resume before answering 429 (0: answer at once). */
  holdWhilePausedMs?: number;
  onCall?: (event: CallEvent) => void;
}

export interface Gateway {
  /** `http://host:port`, no trailing slash. */
  url: string;
  rollouts: Rollouts;
  endpoints: Endpoints;
  state(): { paused: boolean; inflight: number };
  pause(): void;
  resume(): void;
  /** Refuse (or hold) new calls and wait for the model calls in flight (at most `timeoutMs`). */
  drain(timeoutMs: number): Promise<void>;
  /** Abort the calls in flight (each is recorded as failed), then stop listening. */
  close(): Promise<void>;
}

/** Shared by the route modules. */
export interface GatewayState {
  /** Where the gateway listens, known once it does. */
  url: string;
  rollouts: Rollouts;
  endpoints: Endpoints;
  calls: CallContext;
  paused: boolean;
  holdWhilePausedMs: number;
  /** Calls held while paused, released by resume (or close). */
  held: Set<() => void>;
  /** Every request being handled; `aborts` holds the model calls among them. */
  requests: Set<Promise<void>>;
  aborts: Set<AbortController>;
}

export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const { store } = options;
  if (options.adminKey.length < minAdminKeyLength) {
    throw new AlightError(`the admin key must have at least ${minAdminKeyLength} characters`, ExitCode.usage);
  }
  const upstream = new UpstreamClient(options.upstream, options.upstreamApiKey);
  const endpoints = new Endpoints();
  const { url, kind } = options.upstream;
  if (url) {
    // A vLLM upstream serves one model: pin it, so that any name a harness sends works. Hosted APIs pass through.
    const discovered = kind === 'vllm' ? (await upstream.models(url))[0] : undefined;
    const model = options.upstream.model ?? discovered ?? null;
    endpoints.upsert({ url, model, kind, version: 0 });
  }
  const { cacheRollouts, cacheIdleS } = options.gateway;
  store.calls.boundCache(cacheRollouts, cacheIdleS * 1000);
  const memories = new RolloutMemories((rolloutId, kind, names) => store.addEvent(rolloutId, 'untranslated', { kind, names }), cacheRollouts, cacheIdleS * 1000);
  const state: GatewayState = {
    url: '',
    rollouts: new Rollouts(store, (id) => memories.forget(id)),
    endpoints,
    paused: false,
    holdWhilePausedMs: options.holdWhilePausedMs ?? 0,
    held: new Set(),
    requests: new Set(),
    aborts: new Set(),
    calls: {
      store, upstream, endpoints, memories, nativeProtocols: options.upstream.nativeProtocols,
      bodyLimit: Math.floor(options.gateway.bodyLimitMb * 1024 * 1024),
      onCall: options.onCall ?? (() => {}),
    },
  };

  const server = createServer((req, res) => {
    nextRequestOn(req);
    const done = route(state, options.adminKey, req, res).catch((err) => {
      sendError(res, err instanceof HttpError ? err : new HttpError(500, `gateway error: ${errorMessage(err)}`, 'server_error'));
    });
    state.requests.add(done);
    void done.finally(() => state.requests.delete(done));
  });
  server.keepAliveTimeout = 65_000;
  const port = await listen(server, options.gateway.host, options.gateway.port);
  const { address, family } = server.address() as AddressInfo;
  state.url = `http://${family === 'IPv6' ? `[${address}]` : address}:${port}`;

  const release = (): void => {
    for (const wake of state.held) wake();
    state.held.clear();
  };
  const settle = async (timeoutMs: number): Promise<void> => {
    const deadline = Date.now() + timeoutMs;
    while (state.requests.size > 0 && Date.now() < deadline) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.allSettled([...state.requests]), new Promise((r) => { timer = setTimeout(r, deadline - Date.now()); })]);
      clearTimeout(timer);
    }
  };

  return {
    url: state.url,
    rollouts: state.rollouts,
    endpoints,
    state: () => stateOf(state),
    pause: () => { state.paused = true; },
    resume: () => { state.paused = false; release(); },
    async drain(timeoutMs) {
      state.paused = true;
      // Held calls wait for the resume: only the model calls already under way are waited for.
      const deadline = Date.now() + timeoutMs;
      while (state.aborts.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    },
    async close() {
      state.paused = true;
      release();
      for (const abort of state.aborts) abort.abort(new Error('interrupted: the gateway shut down'));
      await settle(10_000);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await upstream.close();
    },
  };
}

async function route(state: GatewayState, adminKey: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = req.url ?? '/';
  const path = url.split('?', 1)[0];
  if (path === '/healthz' && req.method === 'GET') return sendJson(res, 200, { ok: true });
  if (path.startsWith('/r/')) return handleAgent(state, path, req, res);
  if (path.startsWith('/api/')) {
    if (!hasBearer(req.headers.authorization, adminKey)) {
      throw new HttpError(401, 'admin routes need `Authorization: Bearer <admin key>`', 'authentication_error');
    }
    return handleAdmin(state, path, req, res);
  }
  throw new HttpError(404, `no route ${req.method} ${path}`, 'not_found_error');
}
