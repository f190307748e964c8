import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { GatewayConfig, UpstreamConfig } from '../config/schema.js';
import { AlightError, ExitCode, errorMessage } from '../errors.js';
import { HttpError, hasBearer, listen, sendError, sendJson } from '../http.js';
import { Rollouts } from '../rollouts/service.js';
import type { Store } from '../store/store.js';
import { handleAdmin } from './admin-routes.js';
import { handleAgent } from './agent-routes.js';
import { Endpoints } from './endpoints.js';
import type { CallEvent } from './model-call.js';
import { nextRequestOn } from './model-call.js';
import { RolloutMemories } from './rollout-memory.js';
import { GatewayState } from './state.js';
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

export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  if (options.adminKey.length < minAdminKeyLength) {
    throw new AlightError(`the admin key must have at least ${minAdminKeyLength} characters`, ExitCode.usage);
  }
  const upstream = new UpstreamClient(options.upstream, options.upstreamApiKey);
  const endpoints = await configuredEndpoints(upstream, options.upstream);
  const state = gatewayState(options, upstream, endpoints);
  const server = createServer((req, res) => {
    nextRequestOn(req);
    state.track(
      route(state, options.adminKey, req, res).catch((err) => {
        sendError(
          res,
          err instanceof HttpError ? err : new HttpError(500, `gateway error: ${errorMessage(err)}`, 'server_error'),
        );
      }),
    );
  });
  server.keepAliveTimeout = 65_000;
  const port = await listen(server, options.gateway.host, options.gateway.port);
  const { address, family } = server.address() as AddressInfo;
  state.url = `http://${family === 'IPv6' ? `[${address}]` : address}:${port}`;

  let closed: Promise<void> | undefined;
  return {
    url: state.url,
    rollouts: state.rollouts,
    endpoints,
    state: () => state.snapshot(),
    pause: () => state.pause(),
    resume: () => state.resume(),
    drain: (timeoutMs) => state.drain(timeoutMs),
    // Once: a second close (a caller's cleanup after an early one) waits for the first.
    close() {
      closed ??= (async () => {
        await state.stop(10_000);
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await upstream.close();
      })();
      return closed;
    },
  };
}

/** The configured upstream, if any, as the first endpoint. */
async function configuredEndpoints(upstream: UpstreamClient, config: UpstreamConfig): Promise<Endpoints> {
  const endpoints = new Endpoints();
  const { url, kind } = config;
  if (url) {
    // A vLLM upstream serves one model: pin it, so that any name a harness sends works. Hosted APIs pass through.
    const discovered = kind === 'vllm' ? (await upstream.models(url))[0] : undefined;
    const model = config.model ?? discovered ?? null;
    endpoints.upsert({ url, model, kind, version: 0 });
  }
  return endpoints;
}

/** The rollouts, the per-rollout caches and what each model call needs, bounded as the config says. */
function gatewayState(options: GatewayOptions, upstream: UpstreamClient, endpoints: Endpoints): GatewayState {
  const { store } = options;
  const { cacheRollouts, cacheIdleS } = options.gateway;
  store.calls.boundCache(cacheRollouts, cacheIdleS * 1000);
  const memories = new RolloutMemories(
    (rolloutId, kind, names) => store.addEvent(rolloutId, 'untranslated', { kind, names }),
    cacheRollouts,
    cacheIdleS * 1000,
  );
  const rollouts = new Rollouts(store, (id) => memories.forget(id));
  return new GatewayState(
    rollouts,
    endpoints,
    {
      store,
      upstream,
      endpoints,
      memories,
      nativeProtocols: options.upstream.nativeProtocols,
      bodyLimit: Math.floor(options.gateway.bodyLimitMb * 1024 * 1024),
      onCall: options.onCall ?? (() => {}),
    },
    options.holdWhilePausedMs ?? 0,
  );
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
