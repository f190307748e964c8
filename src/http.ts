import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { z } from 'zod';
import { formatIssues } from './config/load.js';
import { AlightError, ExitCode } from './errors.js';
import { maxJsonDepth, nestedDeeperThan } from './json-text.js';

/**
 * Whether an `Authorization: Bearer …` header carries `key` (compared in constant time; an empty key never matches).
 */
export function hasBearer(header: string | undefined, key: string): boolean {
  const given = Buffer.from(header?.startsWith('Bearer ') ? header.slice(7) : '');
  const expected = Buffer.from(key);
  return given.length > 0 && given.length === expected.length && timingSafeEqual(given, expected);
}

/** Starts `server` on host:port (0: a free port) and returns the port; a taken port is a clear error. */
export async function listen(server: Server, host: string, port: number): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        new AlightError(
          `cannot listen on ${host}:${port}: ${err.code ?? err.message} (pick another --port)`,
          ExitCode.usage,
        ),
      ),
    );
    server.listen(port, host, resolve);
  });
  return (server.address() as AddressInfo).port;
}

/** Bodies of the reward, event and admin routes are small. */
export const smallBody = 1024 * 1024;

/** An HTTP failure with the OpenAI-style error body every SDK understands. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type = 'invalid_request_error',
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export function errorBody(
  status: number,
  message: string,
  type: string,
): { error: { message: string; type: string; code: number } } {
  return { error: { message, type, code: status } };
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

export function sendError(res: ServerResponse, err: HttpError): void {
  if (res.headersSent) return void res.end();
  sendJson(res, err.status, errorBody(err.status, err.message, err.type), err.headers);
}

/** Reads a JSON object body, refusing wrong content types, bodies over `limit` bytes and malformed JSON. */
export async function readJson(req: IncomingMessage, limit: number): Promise<Record<string, unknown>> {
  return (await readJsonText(req, limit)).body;
}

/** readJson, with the text it parsed and its bytes. */
export async function readJsonText(
  req: IncomingMessage,
  limit: number,
): Promise<{ body: Record<string, unknown>; text: string; bytes: Buffer }> {
  const type = req.headers['content-type'] ?? '';
  if (!type.toLowerCase().startsWith('application/json')) {
    throw new HttpError(415, `expected content-type application/json, got ${type || 'none'}`);
  }
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) throw tooLarge(declared, limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw tooLarge(size, limit);
    chunks.push(chunk);
  }
  const bytes = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    // Replaced with U+FFFD the bytes would reach the model and the trace as something the harness never sent.
    throw new HttpError(400, 'the request body is not valid UTF-8');
  }
  if (nestedDeeperThan(text, maxJsonDepth))
    throw new HttpError(400, `the request body nests arrays and objects deeper than ${maxJsonDepth} levels`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw new HttpError(400, `the request body is not valid JSON: ${(err as Error).message}`);
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new HttpError(400, 'the request body must be a JSON object');
  }
  return { body: body as Record<string, unknown>, text, bytes };
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
function tooLarge(size: number, limit: number): HttpError {
  return new HttpError(
    413,
    `the request body is ${size} bytes or more; the gateway accepts at most ${limit} (gateway.bodyLimitMb)`,
    'invalid_request_error',
    { connection: 'close' },
  );
}

export function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw new HttpError(400, `invalid body:\n${formatIssues(parsed.error)}`);
  return parsed.data;
}

/** A path segment, percent-decoded; a malformed escape decodes to itself rather than failing the request. */
export function decodePathPart(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

export type Params = Record<string, string>;

interface Route<H> {
  method: string;
  pattern: RegExp;
  names: string[];
  handler: H;
}

/**
 * The one router of every server here (the gateway's agent and admin routes, `alight serve`, `alight ui`), in the
 * shape of hono's: routes are a method and a path pattern, tried in the order added. In a pattern `{name}` takes a
 * segment's characters (as few as the rest of the segment allows, so `{model}:{method}` splits at the first colon)
 * and `{name...}` the rest of the path; the parameters come percent-decoded. `H` is the server's own handler type.
 */
export class Router<H> {
  private readonly routes: Route<H>[] = [];

  on(methods: string | readonly string[], pattern: string, handler: H): this {
    const names: string[] = [];
    const source = pattern.replace(/\{(\w+)(\.\.\.)?\}|[.*+?^$()|[\]\\]/g, (m, name: string, rest: string) => {
      if (!name) return `\\${m}`;
      names.push(name);
      return rest ? '(.*)' : '([^/]+?)';
    });
    const regex = new RegExp(`^${source}$`);
    for (const method of typeof methods === 'string' ? [methods] : methods)
      this.routes.push({ method, pattern: regex, names, handler });
    return this;
  }

  get(pattern: string, handler: H): this {
    return this.on('GET', pattern, handler);
  }

  post(pattern: string, handler: H): this {
    return this.on('POST', pattern, handler);
  }

  /** The first route for the method and path (no query string), with its parameters; null when none matches. */
  find(method: string, path: string): { handler: H; params: Params } | null {
    for (const route of this.routes) {
      if (route.method !== method) continue;
      const m = route.pattern.exec(path);
      if (m)
        return {
          handler: route.handler,
          params: Object.fromEntries(route.names.map((n, i) => [n, decodePathPart(m[i + 1])])),
        };
    }
    return null;
  }
}
