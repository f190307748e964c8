import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, type Dispatcher, request } from 'undici';
import type { UpstreamConfig } from '../config/schema.js';
import type { Endpoint } from './endpoints.js';

/** An upstream answer with an HTTP error status; retried when the status says "try again". */
export class UpstreamStatusError extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
    readonly retryAfterS: number | null,
  ) {
    super(`upstream answered HTTP ${status}`);
  }
}

const retryStatuses = new Set([408, 429, 500, 502, 503, 504]);
const retryCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);

export function isRetryable(err: unknown): boolean {
  if (err instanceof UpstreamStatusError) return retryStatuses.has(err.status);
  const code =
    (err as { code?: string; cause?: { code?: string } }).code ?? (err as { cause?: { code?: string } }).cause?.code;
  return code !== undefined && retryCodes.has(code);
}

/** Full-jitter exponential backoff, honouring Retry-After up to the cap. */
export function backoffMs(attempt: number, retryAfterS: number | null, baseMs = 200, capMs = 8000): number {
  if (retryAfterS !== null) return Math.min(retryAfterS * 1000, capMs);
  return Math.random() * Math.min(capMs, baseMs * 2 ** attempt);
}

export type Consume<T> = (res: Dispatcher.ResponseData) => Promise<T>;

/** Sends requests to the upstream engines; `consume` decides what a usable answer is and throws to retry. */
export class UpstreamClient {
  private readonly agent: Agent;

  constructor(
    private readonly config: UpstreamConfig,
    private readonly apiKey: string | undefined,
  ) {
    this.agent = new Agent({
      keepAliveTimeout: 30_000,
      headersTimeout: config.timeoutS * 1000,
      bodyTimeout: config.timeoutS * 1000,
      connections: 256,
    });
  }

  async post<T>(
    endpoint: Endpoint,
    path: string,
    payload: string | Buffer,
    signal: AbortSignal,
    consume: Consume<T>,
  ): Promise<T> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.apiKey) headers.authorization = `Bearer ${this.apiKey}`;
    // A path from the root (vLLM's /tokenize) or, as usual, after the endpoint's /v1.
    const url = path.startsWith('/') ? new URL(path, endpoint.url).href : `${endpoint.url}/${path}`;
    for (let attempt = 0; ; attempt++) {
      try {
        const res = await request(url, { method: 'POST', headers, body: payload, signal, dispatcher: this.agent });
        return await consume(res);
      } catch (err) {
        if (signal.aborted || attempt >= this.config.retries || !isRetryable(err)) throw err;
        const retryAfter = err instanceof UpstreamStatusError ? err.retryAfterS : null;
        await sleep(backoffMs(attempt, retryAfter), undefined, { signal });
      }
    }
  }

  /** The model ids the upstream lists, or [] when it does not answer. */
  async models(baseUrl: string): Promise<string[]> {
    try {
      const headers: Record<string, string> = this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {};
      const res = await request(`${baseUrl.replace(/\/+$/, '')}/models`, {
        headers,
        dispatcher: this.agent,
        signal: AbortSignal.timeout(5000),
      });
      const body = (await res.body.json()) as { data?: { id?: unknown }[] };
      return (body.data ?? []).map((m) => m.id).filter((id): id is string => typeof id === 'string');
    } catch {
      return [];
    }
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

export function retryAfterOf(headers: Dispatcher.ResponseData['headers']): number | null {
  const value = Number(headers['retry-after']);
  return Number.isFinite(value) && value >= 0 ? value : null;
}

/** The weights version an alight engine reports with each answer (`alight serve` sets it; vLLM does not). */
export function versionOf(headers: Dispatcher.ResponseData['headers']): number | null {
  const value = Number(headers['x-alight-model-version']);
  return headers['x-alight-model-version'] !== undefined && Number.isInteger(value) ? value : null;
}

/** Reads a response whole, throwing on an error status so that the retry loop sees it. */
export async function readWhole(
  res: Dispatcher.ResponseData,
): Promise<{ status: number; bytes: Buffer; readonly text: string; version: number | null }> {
  // Bytes: the token fields are read from them (token-fields.ts) and the harness's answer cut from them. A UTF-8
  // byte-order mark is dropped, as text() drops it.
  const raw = Buffer.from(await res.body.arrayBuffer());
  const bytes = raw[0] === 0xef && raw[1] === 0xbb && raw[2] === 0xbf ? raw.subarray(3) : raw;
  if (res.statusCode >= 400) throw new UpstreamStatusError(res.statusCode, bytes.toString(), retryAfterOf(res.headers));
  return {
    status: res.statusCode,
    bytes,
    get text() {
      return bytes.toString();
    },
    version: versionOf(res.headers),
  };
}
