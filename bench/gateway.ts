/**
 * Gateway benchmark: what recording costs next to talking to the engine directly and to a bare proxy.
 *
 *   npm run bench                              # build, then this file
 *   BENCH_CPU_PROF=/tmp/prof npm run bench     # also write a V8 CPU profile of the gateway process
 *
 * The scripted upstream and the server under test each run in a child process (bench/server.ts); the load
 * generator runs here. See bench/BENCHMARKS.md for what is measured and the latest results.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import type { ToChild, ToParent, Usage } from './server.js';
import { HISTORY_BYTES, historyOf, PROMPT_TOKENS, REPLY, requestBody, TOKENS_PER_CHUNK } from './workload.js';

const CLIENTS = 64;
const WARMUP = Number(process.env.BENCH_WARMUP ?? 500);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2000);
const SEQ_WARMUP = 100;
const SEQ_REQUESTS = 500;
const PHASE_LIMIT_MS = 60_000;
const TOTAL_LIMIT_MS = 5 * 60_000;

type Config = 'direct' | 'pass-through' | 'gateway';

// ---- child processes --------------------------------------------------------------------------------------------

class Child {
  private constructor(private readonly proc: ChildProcess, readonly url: string) {}

  static async start(args: string[], execArgv: string[] = []): Promise<Child> {
    const proc = fork(new URL('./server.ts', import.meta.url), args, {
      execArgv: ['--import', 'tsx', ...execArgv], stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    children.add(proc);
    proc.once('exit', () => children.delete(proc));
    const ready = await next(proc, 'ready');
    return new Child(proc, ready.url);
  }

  async ask<T extends ToChild['type']>(message: Extract<ToChild, { type: T }>): Promise<Extract<ToParent, { type: T }>> {
    const answer = next(this.proc, message.type);
    this.proc.send(message);
    return answer;
  }

  async usage(): Promise<Usage> {
    return (await this.ask({ type: 'usage' })).usage;
  }

  async stop(): Promise<number | null> {
    const exited = new Promise((r) => this.proc.once('exit', r));
    const { dbBytes } = await this.ask({ type: 'stop' });
    await exited;
    return dbBytes;
  }
}

const children = new Set<ChildProcess>();

function next<T extends ToParent['type']>(proc: ChildProcess, type: T): Promise<Extract<ToParent, { type: T }>> {
  return new Promise((resolve, reject) => {
    const onMessage = (m: ToParent): void => {
      if (m.type !== type) return;
      proc.off('message', onMessage).off('exit', onExit);
      resolve(m as Extract<ToParent, { type: T }>);
    };
    const onExit = (code: number | null): void => reject(new Error(`bench server exited (${code}) before answering ${type}`));
    proc.on('message', onMessage).once('exit', onExit);
  });
}

// ---- load -------------------------------------------------------------------------------------------------------

interface Phase {
  done: number;
  errors: number;
  seconds: number;
  whole: number[];
  stream: number[];
}

const histories = Array.from({ length: CLIENTS }, (_, i) => historyOf(i));
let callNo = 0;

/** `clients` loops, each sending its next request as soon as the previous answer's last byte arrived. */
async function load(urlOf: (client: number) => string, clients: number, total: number): Promise<Phase> {
  const dispatcher = new Agent({ keepAliveTimeout: 60_000, connections: clients });
  const phase: Phase = { done: 0, errors: 0, seconds: 0, whole: [], stream: [] };
  const deadline = Date.now() + PHASE_LIMIT_MS;
  let issued = 0;
  const client = async (c: number): Promise<void> => {
    while (issued < total && Date.now() < deadline) {
      const n = issued++;
      const stream = clients > 1 ? c % 2 === 1 : n % 2 === 1;
      const body = requestBody(histories[c], callNo++, stream);
      const started = performance.now();
      try {
        const res = await request(urlOf(c), { method: 'POST', headers: { 'content-type': 'application/json' }, body, dispatcher });
        const text = await res.body.text();
        const ms = performance.now() - started;
        const complete = stream ? text.endsWith('data: [DONE]\n\n') : text.endsWith('}');
        if (res.statusCode !== 200 || !complete) throw new Error(`HTTP ${res.statusCode}: ${text.slice(0, 200)}`);
        (stream ? phase.stream : phase.whole).push(ms);
        phase.done++;
      } catch (err) {
        if (phase.errors++ === 0) console.error(`  first error: ${String(err)}`);
      }
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: clients }, (_, c) => client(c)));
  phase.seconds = (performance.now() - started) / 1000;
  await dispatcher.close();
  return phase;
}

// ---- one configuration ------------------------------------------------------------------------------------------

interface Row {
  config: Config;
  clients: number;
  phase: Phase;
  proxyCpuUs: number | null;
  upstreamCpuUs: number;
  clientCpuUs: number;
  peakRssBytes: number | null;
}

async function measure(config: Config, server: Child | null, urlOf: (c: number) => string, clients: number, total: number): Promise<Row> {
  const [proxy0, up0, client0] = [await server?.usage(), await upstream.usage(), process.cpuUsage()];
  const phase = await load(urlOf, clients, total);
  const [proxy1, up1, client1] = [await server?.usage(), await upstream.usage(), process.cpuUsage(client0)];
  return {
    config, clients, phase,
    proxyCpuUs: proxy0 && proxy1 ? proxy1.cpuUs - proxy0.cpuUs : null,
    upstreamCpuUs: up1.cpuUs - up0.cpuUs,
    clientCpuUs: client1.user + client1.system,
    peakRssBytes: proxy1?.peakRssBytes ?? null,
  };
}

async function run(config: Config): Promise<{ rows: Row[]; dbBytes: number | null }> {
  let server: Child | null = null;
  let urlOf = (_c: number): string => `${upstream.url}/chat/completions`;
  if (config === 'pass-through') {
    server = await Child.start(['proxy', upstream.url]);
    urlOf = () => `${server!.url}/chat/completions`;
  } else if (config === 'gateway') {
    const prof = process.env.BENCH_CPU_PROF;
    server = await Child.start(['gateway', upstream.url, dir], prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : []);
    const { tokens } = await server.ask({ type: 'tokens', n: CLIENTS });
    urlOf = (c) => `${server!.url}/r/${tokens[c]}/v1/chat/completions`;
  }
  console.error(`${config}: warm-up, ${CLIENTS} clients`);
  await load(urlOf, CLIENTS, WARMUP);
  console.error(`${config}: ${REQUESTS} requests, ${CLIENTS} clients`);
  const concurrent = await measure(config, server, urlOf, CLIENTS, REQUESTS);
  console.error(`${config}: ${SEQ_REQUESTS} requests, 1 client`);
  await load(urlOf, 1, SEQ_WARMUP);
  const sequential = await measure(config, server, urlOf, 1, SEQ_REQUESTS);
  const dbBytes = server ? await server.stop() : null;
  return { rows: [concurrent, sequential], dbBytes };
}

// ---- report -----------------------------------------------------------------------------------------------------

const pct = (xs: number[], q: number): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : NaN;
};
const all = (r: Row): number[] => [...r.phase.whole, ...r.phase.stream];
const cpuMsPerReq = (us: number | null, r: Row): number | null => (us === null ? null : us / 1000 / r.phase.done);
const f = (x: number | null, digits = 2): string => (x === null || Number.isNaN(x) ? '—' : x.toFixed(digits));
const signed = (x: number | null): string => (x === null ? '—' : `${x >= 0 ? '+' : ''}${x.toFixed(2)}`);

function table(rows: Row[]): string {
  const base = rows.find((r) => r.config === 'direct')!;
  const lines = [
    '| config | clients | ok / errors | req/s | p50 ms | p99 ms | p50 whole / stream ms | added p50 ms | added p99 ms | added p50 whole / stream ms | proxy CPU ms/req | proxy peak RSS MB | upstream CPU ms/req | client CPU ms/req |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const r of rows) {
    const added = (get: (x: Row) => number): number | null => (r === base ? null : get(r) - get(base));
    lines.push(`| ${[
      r.config, r.clients, `${r.phase.done} / ${r.phase.errors}`, f(r.phase.done / r.phase.seconds, 0),
      f(pct(all(r), 0.5)), f(pct(all(r), 0.99)), `${f(pct(r.phase.whole, 0.5))} / ${f(pct(r.phase.stream, 0.5))}`,
      signed(added((x) => pct(all(x), 0.5))), signed(added((x) => pct(all(x), 0.99))),
      `${signed(added((x) => pct(x.phase.whole, 0.5)))} / ${signed(added((x) => pct(x.phase.stream, 0.5)))}`,
      f(cpuMsPerReq(r.proxyCpuUs, r)), r.peakRssBytes === null ? '—' : f(r.peakRssBytes / 2 ** 20, 0),
      f(cpuMsPerReq(r.upstreamCpuUs, r)), f(cpuMsPerReq(r.clientCpuUs, r)),
    ].join(' | ')} |`);
  }
  return lines.join('\n');
}

// ---- main -------------------------------------------------------------------------------------------------------

const watchdog = setTimeout(() => {
  console.error(`bench: over ${TOTAL_LIMIT_MS / 1000} s, giving up`);
  for (const proc of children) proc.kill('SIGKILL');
  process.exit(1);
}, TOTAL_LIMIT_MS);

const dir = mkdtempSync(join(tmpdir(), 'alight-bench-'));
const upstream = await Child.start(['upstream']);
// A throw-away round warms the upstream and this load generator (JIT, heap sizes); without it whichever
// configuration runs first looks slow.
await run('direct');
const results: Record<Config, { rows: Row[]; dbBytes: number | null }> = {
  direct: await run('direct'),
  'pass-through': await run('pass-through'),
  gateway: await run('gateway'),
};
await upstream.stop();
rmSync(dir, { recursive: true, force: true });
clearTimeout(watchdog);

const concurrent = Object.values(results).map((x) => x.rows[0]);
const sequential = Object.values(results).map((x) => x.rows[1]);
const [, passC, gwC] = concurrent;
const [directS, passS, gwS] = sequential;
const cpuRatio = (gwC.proxyCpuUs! / gwC.phase.done) / (passC.proxyCpuUs! / passC.phase.done);
const cpuRatioSeq = (gwS.proxyCpuUs! / gwS.phase.done) / (passS.proxyCpuUs! / passS.phase.done);
const addedSeq = pct(all(gwS), 0.5) - pct(all(directS), 0.5);
const dbBytes = results.gateway.dbBytes!;
const recorded = WARMUP + REQUESTS + SEQ_WARMUP + SEQ_REQUESTS;

const sample = requestBody(histories[0], 0, false);
console.log(`## Gateway benchmark — ${new Date().toISOString().slice(0, 10)}

Machine: ${cpus().length} × ${cpus()[0]?.model.trim()}, Node ${process.version}, ${process.platform}.
Workload: request body ${(Buffer.byteLength(sample) / 1024).toFixed(1)} KB (chat history ~${HISTORY_BYTES / 1024} KB); \
answer: ${PROMPT_TOKENS} prompt token ids + ${REPLY.length + 1} completion tokens with logprobs, \
streams at ${TOKENS_PER_CHUNK} token(s) per chunk; half the requests stream.
Per configuration: ${WARMUP} warm-up + ${REQUESTS} requests with ${CLIENTS} clients, then ${SEQ_WARMUP} + ${SEQ_REQUESTS} with 1 client.
Latency is client-observed, to the last byte. "Added" is the configuration's percentile minus direct's.

${table(concurrent)}

${table(sequential)}

- gateway CPU/request ÷ pass-through CPU/request: **${cpuRatio.toFixed(2)}×** with ${CLIENTS} clients, \
${cpuRatioSeq.toFixed(2)}× with 1 client (target ≤ 2×: ${cpuRatio <= 2 ? 'met' : 'missed'})
- gateway added p50 latency, 1 client: **${addedSeq.toFixed(2)} ms** (target ≤ 2 ms: ${addedSeq <= 2 ? 'met' : 'missed'}); \
with ${CLIENTS} clients: ${(pct(all(gwC), 0.5) - pct(all(concurrent[0]), 0.5)).toFixed(2)} ms
- SQLite file after the run: ${(dbBytes / 2 ** 20).toFixed(1)} MB for ${recorded} recorded calls \
(${(dbBytes / recorded / 1024).toFixed(1)} KB/call; ${CLIENTS} rollouts)`);
