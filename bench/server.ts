/**
 * One server of the gateway benchmark, run in its own process so that its CPU time and peak RSS can be measured:
 *
 *   node --import tsx bench/server.ts upstream
 *   node --import tsx bench/server.ts proxy   <upstream base url>
 *   node --import tsx bench/server.ts naive   <upstream base url> <temp dir>
 *   node --import tsx bench/server.ts gateway <upstream base url> <temp dir>
 *
 * It talks to the parent over IPC: it sends `{ type: 'ready', url }` once listening, then answers `{ type: 'usage' }`,
 * `{ type: 'tokens', n }` (gateway only: issue n rollouts) and `{ type: 'stop' }` with a message of the same type.
 */
import { randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import { Agent, createServer, type IncomingHttpHeaders, request } from 'node:http';
import { join } from 'node:path';
import { startScriptedUpstream } from '../test/helpers/scripted-upstream.js';
import { listenLocal } from './listen.js';
import { naiveRecorder } from './naive-recorder.js';
import { PROMPT_TOKENS, REPLY, TOKENS_PER_CHUNK } from './workload.js';

export type Usage = { cpuUs: number; rssBytes: number; peakRssBytes: number };
export type ToParent =
  | { type: 'ready'; url: string }
  | { type: 'usage'; usage: Usage }
  | { type: 'tokens'; tokens: string[] }
  | { type: 'stop'; dbBytes: number | null };
export type ToChild = { type: 'usage' } | { type: 'tokens'; n: number } | { type: 'stop' };

interface Running {
  url: string;
  tokens?(n: number): string[];
  stop(): Promise<number | null>;
}

function usage(): Usage {
  const cpu = process.cpuUsage();
  // maxRSS is in kilobytes: the peak over the process's life, which is one configuration of the benchmark.
  return {
    cpuUs: cpu.user + cpu.system,
    rssBytes: process.memoryUsage.rss(),
    peakRssBytes: process.resourceUsage().maxRSS * 1024,
  };
}

async function upstream(): Promise<Running> {
  const ids = Array.from({ length: PROMPT_TOKENS }, (_, i) => 1000 + ((i * 7919) % 150_000));
  // BENCH_PROMPT_VARY=1: every answer's first prompt id differs, so no prompt extends the last one (the gateway decodes
  // every id): the worst case, where an agent loop's prompts, each extending the last, are the best.
  const fixedPromptIds = process.env.BENCH_PROMPT_VARY ? (index: number) => [index % 100_000, ...ids.slice(1)] : ids;
  const up = await startScriptedUpstream({ fixedPromptIds, reply: () => REPLY, tokensPerChunk: TOKENS_PER_CHUNK });
  // The scripted upstream logs every request it served; a benchmark has no use for that log.
  setInterval(() => {
    up.log.length = 0;
  }, 200).unref();
  return {
    url: up.url,
    stop: async () => {
      await up.close();
      return null;
    },
  };
}

const hopByHop = new Set(['connection', 'keep-alive', 'transfer-encoding', 'host', 'proxy-connection', 'upgrade']);
function endToEnd(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !hopByHop.has(name)));
}

/** The least a reverse proxy can do: pipe the request up and the response back, recording nothing. */
async function proxy(target: string): Promise<Running> {
  const base = new URL(target);
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const server = createServer((req, res) => {
    const up = request(
      {
        host: base.hostname,
        port: base.port,
        method: req.method,
        path: req.url, // both serve under /v1
        headers: endToEnd(req.headers),
        agent,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers));
        answer.pipe(res);
      },
    );
    up.on('error', (err) => {
      if (!res.headersSent) res.writeHead(502);
      res.end(String(err));
    });
    req.pipe(up);
  });
  return listenLocal(server, () => agent.destroy());
}

/**
 * The gateway as users run it: the compiled dist/ (`npm run bench` builds it first), not the sources through tsx,
 * whose transform wraps every closure in a naming helper that costs ~2% of the gateway's CPU.
 */
async function gateway(target: string, dir: string): Promise<Running> {
  const dist = (module: string): Promise<unknown> => import(new URL(`../dist/src/${module}`, import.meta.url).href);
  const [{ configSchema }, { startGateway }, { Store }] = (await Promise.all([
    dist('config/schema.js'),
    dist('gateway/server.js'),
    dist('store/store.js'),
  ])) as [
    typeof import('../src/config/schema.js'),
    typeof import('../src/gateway/server.js'),
    typeof import('../src/store/store.js'),
  ];
  const db = join(dir, 'alight.db');
  const store = Store.open(db);
  const config = configSchema.parse({ upstream: { url: target, kind: 'vllm' }, gateway: { host: '127.0.0.1' } });
  // BENCH_UPSTREAM_KEY: the API key of an upstream that needs one (a vLLM alight started).
  const gw = await startGateway({
    store,
    gateway: config.gateway,
    upstream: config.upstream,
    adminKey: randomBytes(24).toString('hex'),
    upstreamApiKey: process.env.BENCH_UPSTREAM_KEY,
  });
  return {
    url: gw.url,
    tokens: (n) =>
      Array.from({ length: n }, (_, i) => gw.rollouts.create({ run: 'bench', taskId: `client-${i}` }).token),
    async stop() {
      await gw.close();
      store.close(); // checkpoints the WAL into the main file
      return statSync(db).size;
    },
  };
}

const send = (message: ToParent): void => void process.send!(message);
const [role, target, dir] = process.argv.slice(2);
const roles: Record<string, () => Promise<Running>> = {
  upstream,
  proxy: () => proxy(target),
  naive: () => naiveRecorder(target, dir),
  gateway: () => gateway(target, dir),
};
if (!roles[role]) throw new Error(`unknown role ${role}`);
const running = await roles[role]();

process.on('message', async (message: ToChild) => {
  if (message.type === 'usage') send({ type: 'usage', usage: usage() });
  else if (message.type === 'tokens') send({ type: 'tokens', tokens: running.tokens!(message.n) });
  else if (message.type === 'stop') {
    send({ type: 'stop', dbBytes: await running.stop() });
    process.disconnect();
  }
});
send({ type: 'ready', url: running.url });
