/**
 * The gateway beside the reference's proxy — Agent Lightning 1.0.2's `agl-server` (bench/peers/: its own app, in a
 * Python 3.12 virtualenv) — and a bare pass-through, on the workload of `npm run bench` at 8,192 and 20,000 prompt
 * ids. Non-streaming only: the reference refuses `stream: true`. Each server runs in its own process against the
 * same scripted vLLM-format upstream; CPU per request is read from that process (/proc for the Python one).
 *
 *   npm run bench:peers      # installs the peer once (~25 s, 93 MB), then ~4 min on 2 cores
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Child } from './child.js';
import { loadPhase, type Phase } from './load.js';
import { historyOf, requestBody } from './workload.js';

const CLIENTS = 64;
const [WARMUP, REQUESTS, SEQ_REQUESTS] = [300, Number(process.env.BENCH_REQUESTS ?? 1500), 300];
const LOADS = [8192, 20_000];
const histories = Array.from({ length: CLIENTS }, (_, i) => historyOf(i));
let callNo = 0;

/** A server under test: its URL for a client, its CPU time so far (µs), and how to stop it. */
interface Server {
  urlOf(client: number): string;
  cpuUs(): Promise<number>;
  stop(): Promise<void>;
}

async function nodeServer(role: 'proxy' | 'gateway', upstream: string, dir: string): Promise<Server> {
  const child = await Child.start(role === 'proxy' ? ['proxy', upstream] : ['gateway', upstream, dir]);
  const tokens = role === 'gateway' ? (await child.ask({ type: 'tokens', n: CLIENTS })).tokens : [];
  return {
    urlOf: (c) =>
      role === 'proxy' ? `${child.url}/chat/completions` : `${child.url}/r/${tokens[c]}/v1/chat/completions`,
    cpuUs: async () => (await child.usage()).cpuUs,
    stop: async () => void (await child.stop()),
  };
}

const aglPython = join(
  process.env.ALIGHT_CACHE ?? join(homedir(), '.cache', 'alight'),
  'peers',
  'agl',
  'bin',
  'python',
);

/** agl-server's app (bench/peers/agl_proxy.py), access log off: the reference at its cheapest. */
async function aglServer(upstream: string): Promise<Server> {
  const port = await freePort();
  const proc = spawn(
    aglPython,
    [join(import.meta.dirname, 'peers', 'agl_proxy.py'), upstream, String(port), '--no-access-log'],
    {
      stdio: ['ignore', 'pipe', 'ignore'],
    },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    proc.stdout!.on('data', (d) => {
      out += d;
      const m = /READY (\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    proc.once('exit', (code) => reject(new Error(`agl_proxy.py exited with ${code}`)));
  });
  return { urlOf: () => `${url}/chat/completions`, cpuUs: async () => procCpuUs(proc), stop: () => stopped(proc) };
}

/** utime + stime of a process, from /proc (clock ticks of 10 ms). */
function procCpuUs(proc: ChildProcess): number {
  const fields = readFileSync(`/proc/${proc.pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

function stopped(proc: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    proc.once('exit', () => resolve());
    proc.kill('SIGTERM');
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

interface Row {
  server: string;
  clients: number;
  phase: Phase;
  cpuMsPerReq: number;
}

async function measure(name: string, s: Server, clients: number, total: number): Promise<Row> {
  const load = (n: number, c: number) =>
    loadPhase({
      urlOf: s.urlOf,
      clients: c,
      total: n,
      limitMs: 120_000,
      streams: 'none',
      bodyOf: (client) => requestBody(histories[client], callNo++, false),
      complete: (text) => text.endsWith('}') && text.includes('"prompt_token_ids"'),
    });
  await load(clients === 1 ? 50 : WARMUP, clients);
  const before = await s.cpuUs();
  const phase = await load(total, clients);
  return { server: name, clients, phase, cpuMsPerReq: ((await s.cpuUs()) - before) / 1000 / phase.done };
}

const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

async function oneLoad(ids: number, dir: string): Promise<Row[]> {
  process.env.BENCH_PROMPT_TOKENS = String(ids);
  const upstream = await Child.start(['upstream']);
  const rows: Row[] = [];
  const starts: [string, () => Promise<Server>][] = [
    ['pass-through', () => nodeServer('proxy', upstream.url, dir)],
    ['alight gateway', () => nodeServer('gateway', upstream.url, dir)],
    ['agl-server 1.0.2', () => aglServer(upstream.url)],
  ];
  for (const [name, start] of starts) {
    console.error(`${ids} ids: ${name}`);
    const s = await start();
    rows.push(await measure(name, s, CLIENTS, REQUESTS), await measure(name, s, 1, SEQ_REQUESTS));
    await s.stop();
  }
  await upstream.stop();
  return rows;
}

function report(ids: number, rows: Row[]): string {
  const cpu = (name: string, clients: number) => rows.find((r) => r.server === name && r.clients === clients)!;
  const lines = [
    `### ${ids} prompt ids\n`,
    '| server | clients | ok / errors | req/s | p50 ms | CPU ms/req | ÷ pass-through | reference ÷ it |',
    '|---|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const r of rows) {
    const base = cpu('pass-through', r.clients).cpuMsPerReq;
    const ref = cpu('agl-server 1.0.2', r.clients).cpuMsPerReq;
    lines.push(
      `| ${r.server} | ${r.clients} | ${r.phase.done} / ${r.phase.errors} | ${(r.phase.done / r.phase.seconds).toFixed(0)} | ` +
        `${p50(r.phase.whole).toFixed(2)} | ${r.cpuMsPerReq.toFixed(2)} | ${(r.cpuMsPerReq / base).toFixed(2)}× | ` +
        `${(ref / r.cpuMsPerReq).toFixed(2)}× |`,
    );
  }
  return lines.join('\n');
}

const dir = mkdtempSync(join(tmpdir(), 'alight-peers-'));
const results: [number, Row[]][] = [];
for (const ids of LOADS) results.push([ids, await oneLoad(ids, dir)]);
console.log(`## Against the reference's proxy — ${new Date().toISOString().slice(0, 10)}\n`);
console.log(
  `Non-streaming chat/completions, request ~50 KB, answers with the prompt ids and 200 completion tokens with ` +
    `logprobs; ${WARMUP} warm-up + ${REQUESTS} requests with ${CLIENTS} clients, then ${SEQ_REQUESTS} with 1 ` +
    `client, per server process. "Reference ÷ it" is agl-server's CPU per request over the row's.\n`,
);
for (const [ids, rows] of results) console.log(`${report(ids, rows)}\n`);
rmSync(dir, { recursive: true, force: true });
if (results.some(([, rows]) => rows.some((r) => r.phase.errors > 0))) process.exitCode = 1;
