import {
  ApiException,
  AuthorizationV1Api,
  BatchV1Api,
  CoordinationV1Api,
  CoreV1Api,
  KubeConfig,
} from '@kubernetes/client-node';
import { AlightError, ExitCode, errorMessage } from '../errors.js';

/** Where the Kubernetes runner works: a kubeconfig's context (or the pod's own service account) and a namespace. */
export interface ClusterTarget {
  /** A kubeconfig file; default: KUBECONFIG, ~/.kube/config, or in a pod its service account. */
  kubeconfig?: string;
  context?: string;
  /** Default: the context's namespace, else `default`. */
  namespace?: string;
}

export interface Cluster {
  kc: KubeConfig;
  namespace: string;
  server: string;
  context: string;
  batch: BatchV1Api;
  core: CoreV1Api;
  leases: CoordinationV1Api;
  authz: AuthorizationV1Api;
}

/** The API clients for a target; an unreadable kubeconfig or an unknown context is the user's to fix. */
export function connect(target: ClusterTarget): Cluster {
  const kc = new KubeConfig();
  try {
    if (target.kubeconfig) kc.loadFromFile(target.kubeconfig);
    else kc.loadFromDefault();
  } catch (err) {
    throw new AlightError(`cannot read the kubeconfig: ${errorMessage(err)}`, ExitCode.input);
  }
  if (target.context) {
    if (!kc.getContextObject(target.context)) {
      const known = kc.getContexts().map((c) => c.name);
      throw new AlightError(
        `no context ${target.context} in the kubeconfig (it has: ${known.join(', ')})`,
        ExitCode.input,
      );
    }
    kc.setCurrentContext(target.context);
  }
  const cluster = kc.getCurrentCluster();
  if (!cluster) {
    throw new AlightError(
      'no Kubernetes cluster configured: set KUBECONFIG, pass --kubeconfig, or write ~/.kube/config',
      ExitCode.input,
    );
  }
  const context = kc.getCurrentContext();
  return {
    kc,
    namespace: target.namespace ?? kc.getContextObject(context)?.namespace ?? 'default',
    server: cluster.server,
    context,
    batch: kc.makeApiClient(BatchV1Api),
    core: kc.makeApiClient(CoreV1Api),
    leases: kc.makeApiClient(CoordinationV1Api),
    authz: kc.makeApiClient(AuthorizationV1Api),
  };
}

/** The HTTP status of an API error (0: no answer: refused, reset, DNS). */
export function statusOf(err: unknown): number {
  return err instanceof ApiException ? err.code : 0;
}

/** What the API server said, in one line: its Status message when it sent one. */
export function apiMessage(err: unknown): string {
  if (err instanceof ApiException) {
    const body = typeof err.body === 'string' ? safeJson(err.body) : err.body;
    const message = (body as { message?: string } | null)?.message;
    return `HTTP ${err.code}${message ? `: ${message}` : ''}`;
  }
  return errorMessage(err);
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return { message: text.slice(0, 300) };
  }
}

// Throttling, the server's own errors and no answer at all are worth another try; the rest (403, 409, 422) are not.
const retryable = (status: number): boolean => status === 0 || status === 429 || status >= 500;

/**
 * Calls the API, retrying 429, 5xx and connection errors with exponential backoff (0.5 s doubling to 8 s, `tries` in
 * all): an API server that restarts or throttles costs a rollout nothing. An abort ends the waiting: the last error
 * is thrown.
 */
export async function withRetries<T>(call: () => Promise<T>, tries = 6, signal?: AbortSignal): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (err) {
      if (attempt >= tries || !retryable(statusOf(err)) || signal?.aborted) throw err;
      await abortableSleep(Math.min(8000, 500 * 2 ** (attempt - 1)), signal);
      if (signal?.aborted) throw err;
    }
  }
}

function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * At most `perSecond` calls started per second, in order (Job creation: a burst of hundreds of rollouts must not
 * flood the API server).
 */
export function rateLimiter(perSecond: number): () => Promise<void> {
  const gap = 1000 / perSecond;
  let next = 0;
  return async () => {
    const now = Date.now();
    const at = Math.max(now, next);
    next = at + gap;
    if (at > now) await new Promise((r) => setTimeout(r, at - now));
  };
}
