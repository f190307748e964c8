import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { storedTrain } from '../config/run-settings.js';
import { packageRoot } from '../package-root.js';
import type { Detokenize } from '../samples/diagnose.js';
import type { Store } from '../store/store.js';
import { type ApiContext, answer } from './api.js';
import { BreakCounts } from './breaks.js';
import { TrainedRows } from './trained.js';

// Recorded text is untrusted: the page builds every element with textContent, and the browser is told to run no
// script but the page's own file, load nothing from elsewhere, and never be framed.
const headers = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

const assets: Record<string, string> = {
  '/': 'index.html',
  '/app.js': 'app.js',
  '/app.css': 'app.css',
};
const types: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
};

export interface UiServer {
  url: string;
  close(): Promise<void>;
}

/**
 * `alight ui`: the page (web/) and its read-only API (api.ts) on 127.0.0.1. Requests naming another host are refused,
 * so a web page elsewhere cannot reach it through DNS rebinding.
 */
export async function startUiServer(store: Store, port = 0, tokenizer?: string): Promise<UiServer> {
  const ctx: ApiContext = {
    tokenizerFor: detokenizers(store, tokenizer),
    breaks: new BreakCounts(store),
    trained: new TrainedRows(dirname(resolve(store.path))),
  };
  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    const send = (status: number, type: string, body: string | Buffer): void => {
      res.writeHead(status, { ...headers, 'content-type': type });
      res.end(body);
    };
    if (host !== '127.0.0.1' && host !== 'localhost') return send(403, types.html, 'forbidden host');
    if (req.method !== 'GET') return send(405, types.html, 'read-only');
    const asset = assets[url.pathname];
    if (asset) return send(200, types[asset.split('.').pop()!], readFileSync(join(packageRoot, 'web', asset)));
    try {
      const a = await answer(store, url.pathname, url.searchParams, ctx);
      if (!a) return send(404, 'application/json', '{"error":"not found"}');
      send(a.status, 'application/json', JSON.stringify(a.body));
    } catch (err) {
      send(500, 'application/json', JSON.stringify({ error: (err as Error).message }));
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}/`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * The tokenizer that decodes a run's tokens: the one given (`--tokenizer`, the config's), else the run's own model
 * folder when it holds a tokenizer.json (a training run's policy); loaded once each, none when neither is there.
 */
function detokenizers(store: Store, given?: string): (run: string) => Promise<Detokenize | null> {
  const loaded = new Map<string, Promise<Detokenize | null>>();
  return (run) => {
    const model = storedTrain(store, run)?.model;
    const spec = given ?? (model && existsSync(join(model, 'tokenizer.json')) ? model : null);
    if (!spec) return Promise.resolve(null);
    if (!loaded.has(spec))
      loaded.set(
        spec,
        import('../samples/tokenizer.js').then((t) => t.loadDetokenizer(spec)).catch(() => null),
      );
    return loaded.get(spec)!;
  };
}
