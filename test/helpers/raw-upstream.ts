import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';
import { type Rig, type RigOverrides, startGatewayAt } from './gateway.js';

type Obj = Record<string, unknown>;

const models = JSON.stringify({ object: 'list', data: [{ id: 'raw-model', object: 'model' }] });

/** One answer of a raw upstream: bytes as they go on the wire, each piece of `body` a write of its own. */
export interface RawAnswer {
  status?: number;
  type?: string;
  body: string | Buffer | (string | Buffer)[];
}

export interface RawUpstream {
  url: string;
  /** The bodies it was sent, in order. */
  requests: Obj[];
  close(): Promise<void>;
}

/**
 * An upstream that answers each request with bytes given exactly: an engine's own answer shapes (vLLM's reasoning
 * chunks) and what the scripted upstream never writes (framings, values JSON cannot hold, ids beyond int32).
 */
export async function startRawUpstream(answer: (body: Obj, index: number) => RawAnswer): Promise<RawUpstream> {
  const requests: Obj[] = [];
  const server = createServer(async (req, res) => {
    if (req.method === 'GET') return void res.writeHead(200, { 'content-type': 'application/json' }).end(models);
    let text = '';
    for await (const c of req) text += c;
    const body = JSON.parse(text) as Obj;
    requests.push(body);
    const a = answer(body, requests.length - 1);
    res.writeHead(a.status ?? 200, {
      'content-type': a.type ?? (body.stream ? 'text/event-stream' : 'application/json'),
    });
    for (const piece of Array.isArray(a.body) ? a.body : [a.body]) {
      res.write(piece);
      // Separate writes reach the reader as separate reads (mostly): framings cut between them are read too.
      await new Promise((r) => setImmediate(r));
    }
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** SSE text of chat chunks, as vLLM frames them. */
export const sseOf = (chunks: Obj[], done = true): string =>
  chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join('') + (done ? 'data: [DONE]\n\n' : '');

/**
 * Raw upstreams with a real gateway in front, made by a test and closed after it (call once at a file's top level).
 * `keep` closes anything else a test opened the same way.
 */
export function rawGateways() {
  const open: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    for (const o of open.splice(0).reverse()) await o.close();
  });
  const keep = <T extends { close(): Promise<void> }>(o: T): T => {
    open.push(o);
    return o;
  };
  return {
    keep,
    async start(answer: (body: Obj, index: number) => RawAnswer, overrides?: RigOverrides) {
      const up = keep(await startRawUpstream(answer));
      const rig: Omit<Rig, 'upstream'> = keep(await startGatewayAt(up.url, overrides));
      return { up, rig };
    },
  };
}
