/**
 * Gateway benchmark: what recording costs next to talking to the engine directly and to a bare proxy.
 *
 *   npm run bench                              # build, then this file (~75 s on 2 cores)
 *   BENCH_CPU_PROF=/tmp/prof npm run bench     # also write V8 CPU profiles of the gateway process
 *   BENCH_ROUNDS / BENCH_WARMUP / BENCH_REQUESTS override the rounds and the 64-client request counts.
 *   BENCH_GATEWAY_FLAGS="--max-semi-space-size=64" passes Node flags to the gateway child (for experiments).
 *   BENCH_STREAMS=all|none makes every request stream or none (default: half), to profile one path alone.
 *   BENCH_PROMPT_VARY=1 makes every answer's prompt ids differ from the last (no prompt extends another: all decoded).
 *   BENCH_PIN=1 gives the server under test a core of its own (child.ts `pin`).
 *
 * The scripted upstream and the server under test each run in a child process (bench/server.ts); the load
 * generator runs here. See bench/BENCHMARKS.md for what is measured and the latest results.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { Child, pin } from './child.js';
import { loadPhase, type Phase, type Streams } from './load.js';
import { HISTORY_BYTES, historyOf, PROMPT_TOKENS, REPLY, requestBody, TOKENS_PER_CHUNK } from './workload.js';

const CLIENTS = 64;
const WARMUP = Number(process.env.BENCH_WARMUP ?? 500);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2000);
const SEQ_WARMUP = 100;
const SEQ_REQUESTS = 500;
/** Rounds of the four configurations, interleaved so that drift on a shared machine hits all alike. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PHASE_LIMIT_MS = 60_000;
const TOTAL_LIMIT_MS = 8 * 60_000;

const configs = ['direct', 'pass-through', 'naive recorder', 'gateway'] as const;
type Config = (typeof configs)[number];

// ---- load -------------------------------------------------------------------------------------------------------

const histories = Array.from({ length: CLIENTS }, (_, i) => historyOf(i));
let callNo = 0;
const bodyOf = (c: number, stream: boolean): string => requestBody(histories[c], callNo++, stream);
// A whole answer, with the token ids: without them the configurations would not be compared fairly.
const complete = (text: string, stream: boolean): boolean =>
  (stream ? text.endsWith('data: [DONE]\n\n') : text.endsWith('}')) && text.includes('"prompt_token_ids"');
const streams = (process.env.BENCH_STREAMS ?? 'half') as Streams;
const load = (urlOf: (client: number) => string, clients: number, total: number): Promise<Phase> =>
  loadPhase({ urlOf, clients, total, limitMs: PHASE_LIMIT_MS, bodyOf, complete, streams });

// ---- one configuration ------------------------------------------------------------------------------------------

/** One configuration at one concurrency, pooled over rounds. */
interface Row {
  config: Config;
  clients: number;
  phase: Phase;
  proxyCpuUs: number | null;
  upstreamCpuUs: number;
  clientCpuUs: number;
  idleRssBytes: number | null;
  peakRssBytes: number | null;
}

async function measure(
  config: Config,
  server: Child | null,
  urlOf: (c: number) => string,
  clients: number,
  total: number,
): Promise<Row> {
  const [proxy0, up0, client0] = [await server?.usage(), await upstream.usage(), process.cpuUsage()];
  const phase = await load(urlOf, clients, total);
  const [proxy1, up1, client1] = [await server?.usage(), await upstream.usage(), process.cpuUsage(client0)];
  return {
    config,
    clients,
    phase,
    proxyCpuUs: proxy0 && proxy1 ? proxy1.cpuUs - proxy0.cpuUs : null,
    upstreamCpuUs: up1.cpuUs - up0.cpuUs,
    clientCpuUs: client1.user + client1.system,
    idleRssBytes: null,
    peakRssBytes: proxy1?.peakRssBytes ?? null,
  };
}

/** One round of a configuration in a fresh server process: warm-up, 64 clients, then 1 client. */
async function run(config: Config): Promise<Row[]> {
  let server: Child | null = null;
  let urlOf = (_c: number): string => `${upstream.url}/chat/completions`;
  if (config === 'pass-through' || config === 'naive recorder') {
    server = await Child.start(config === 'pass-through' ? ['proxy', upstream.url] : ['naive', upstream.url, dir]);
    urlOf = () => `${server!.url}/chat/completions`;
  } else if (config === 'gateway') {
    const prof = process.env.BENCH_CPU_PROF;
    const flags = process.env.BENCH_GATEWAY_FLAGS?.split(' ').filter(Boolean) ?? [];
    server = await Child.start(
      ['gateway', upstream.url, dir],
      [...flags, ...(prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : [])],
    );
    const { tokens } = await server.ask({ type: 'tokens', n: CLIENTS });
    urlOf = (c) => `${server!.url}/r/${tokens[c]}/v1/chat/completions`;
  }
  server?.pin('server');
  const idle = (await server?.usage())?.rssBytes ?? null;
  await load(urlOf, CLIENTS, WARMUP);
  const concurrent = await measure(config, server, urlOf, CLIENTS, REQUESTS);
  await load(urlOf, 1, SEQ_WARMUP);
  const sequential = await measure(config, server, urlOf, 1, SEQ_REQUESTS);
  if (server) dbBytes = (await server.stop()) ?? dbBytes;
  return [concurrent, sequential].map((row) => ({ ...row, idleRssBytes: idle }));
}

function pool(a: Row, b: Row): Row {
  const sum = (x: number | null, y: number | null): number | null => (x === null || y === null ? null : x + y);
  const max = (x: number | null, y: number | null): number | null => (x === null || y === null ? null : Math.max(x, y));
  return {
    ...a,
    phase: {
      done: a.phase.done + b.phase.done,
      errors: a.phase.errors + b.phase.errors,
      seconds: a.phase.seconds + b.phase.seconds,
      whole: [...a.phase.whole, ...b.phase.whole],
      stream: [...a.phase.stream, ...b.phase.stream],
    },
    proxyCpuUs: sum(a.proxyCpuUs, b.proxyCpuUs),
    upstreamCpuUs: a.upstreamCpuUs + b.upstreamCpuUs,
    clientCpuUs: a.clientCpuUs + b.clientCpuUs,
    idleRssBytes: max(a.idleRssBytes, b.idleRssBytes),
    peakRssBytes: max(a.peakRssBytes, b.peakRssBytes),
  };
}

// ---- report -----------------------------------------------------------------------------------------------------

const pct = (xs: number[], q: number): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : NaN;
};
const all = (r: Row): number[] => [...r.phase.whole, ...r.phase.stream];
const cpuMsPerReq = (us: number | null, r: Row): number | null => (us === null ? null : us / 1000 / r.phase.done);
const f = (x: number | null, digits = 2): string => (x === null || Number.isNaN(x) ? '—' : x.toFixed(digits));
const mb = (bytes: number | null): string => (bytes === null ? '—' : (bytes / 2 ** 20).toFixed(0));
const signed = (x: number | null): string => (x === null ? '—' : `${x >= 0 ? '+' : ''}${x.toFixed(2)}`);

function table(rows: Row[]): string {
  const base = rows.find((r) => r.config === 'direct')!;
  const lines = [
    '| config | clients | ok / errors | req/s | p50 ms | p99 ms | p50 whole / stream ms ' +
      '| added p50 ms | added p99 ms | added p50 whole / stream ms | proxy CPU ms/req ' +
      '| proxy RSS idle / peak MB | upstream CPU ms/req | client CPU ms/req |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const r of rows) {
    const added = (get: (x: Row) => number): number | null => (r === base ? null : get(r) - get(base));
    lines.push(
      `| ${[
        r.config,
        r.clients,
        `${r.phase.done} / ${r.phase.errors}`,
        f(r.phase.done / r.phase.seconds, 0),
        f(pct(all(r), 0.5)),
        f(pct(all(r), 0.99)),
        `${f(pct(r.phase.whole, 0.5))} / ${f(pct(r.phase.stream, 0.5))}`,
        signed(added((x) => pct(all(x), 0.5))),
        signed(added((x) => pct(all(x), 0.99))),
        `${signed(added((x) => pct(x.phase.whole, 0.5)))} / ${signed(added((x) => pct(x.phase.stream, 0.5)))}`,
        f(cpuMsPerReq(r.proxyCpuUs, r)),
        r.peakRssBytes === null ? '—' : `${mb(r.idleRssBytes)} / ${mb(r.peakRssBytes)}`,
        f(cpuMsPerReq(r.upstreamCpuUs, r)),
        f(cpuMsPerReq(r.clientCpuUs, r)),
      ].join(' | ')} |`,
    );
  }
  return lines.join('\n');
}

// ---- main -------------------------------------------------------------------------------------------------------

const watchdog = setTimeout(() => {
  console.error(`bench: over ${TOTAL_LIMIT_MS / 1000} s, giving up`);
  Child.killAll();
  process.exit(1);
}, TOTAL_LIMIT_MS);

const dir = mkdtempSync(join(tmpdir(), 'alight-bench-'));
let dbBytes = 0;
const upstream = await Child.start(['upstream']);
upstream.pin('load');
pin(process.pid, 'load');
// A throw-away round warms the upstream and this load generator (JIT, heap sizes); without it whichever
// configuration runs first looks slow.
console.error('warming up');
await run('direct');
const results = new Map<Config, Row[]>();
for (let round = 1; round <= ROUNDS; round++) {
  for (const config of configs) {
    console.error(`round ${round}/${ROUNDS}: ${config}`);
    const rows = await run(config);
    const before = results.get(config);
    results.set(config, before ? before.map((row, i) => pool(row, rows[i])) : rows);
  }
}
await upstream.stop();
rmSync(dir, { recursive: true, force: true });
clearTimeout(watchdog);

const [concurrent, sequential] = [0, 1].map((i) => configs.map((c) => results.get(c)![i]));
const row = (rows: Row[], config: Config): Row => rows[configs.indexOf(config)];
const cpuPerReq = (r: Row): number => r.proxyCpuUs! / r.phase.done;
const ratio = (rows: Row[], a: Config, b: Config): number => cpuPerReq(row(rows, a)) / cpuPerReq(row(rows, b));
const cpuRatio = ratio(concurrent, 'gateway', 'pass-through');
const cpuRatioSeq = ratio(sequential, 'gateway', 'pass-through');
const addedP50 = (rows: Row[], base: Config = 'direct'): number =>
  pct(all(row(rows, 'gateway')), 0.5) - pct(all(row(rows, base)), 0.5);
const recorded = ROUNDS * (WARMUP + REQUESTS + SEQ_WARMUP + SEQ_REQUESTS);

const sample = requestBody(histories[0], 0, false);
console.log(`## Gateway benchmark — ${new Date().toISOString().slice(0, 10)}

Machine: ${cpus().length} × ${cpus()[0]?.model.trim()}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, \
Node ${process.version}, ${process.platform}\
${process.env.BENCH_PIN === '1' ? '; the server under test pinned to a core of its own, the rest on the others' : ''}.
Workload: request body ${(Buffer.byteLength(sample) / 1024).toFixed(1)} KB (chat history ~${HISTORY_BYTES / 1024} KB); \
answer: ${PROMPT_TOKENS} prompt token ids (${process.env.BENCH_PROMPT_VARY ? 'different every answer' : 'the same every answer, as an agent loop extends its last prompt'}) + ${REPLY.length + 1} completion tokens with logprobs, \
streams at ${TOKENS_PER_CHUNK} token(s) per chunk; ${{ half: 'half the', all: 'all', none: 'no' }[streams]} requests stream.
${ROUNDS} interleaved rounds; per configuration and round, in a fresh server process: ${WARMUP} warm-up + ${REQUESTS} \
measured requests with ${CLIENTS} clients, then ${SEQ_WARMUP} + ${SEQ_REQUESTS} with 1 client. \
Figures are pooled over the rounds.
Latency is client-observed, to the last byte. "Added" is the configuration's percentile minus direct's.

${table(concurrent)}

${table(sequential)}

- gateway CPU/request ÷ pass-through CPU/request: **${cpuRatio.toFixed(2)}×** with ${CLIENTS} clients, \
${cpuRatioSeq.toFixed(2)}× with 1 client (target ≤ 2×: ${cpuRatio <= 2 && cpuRatioSeq <= 2 ? 'met' : 'missed'})
- naive recorder CPU/request ÷ pass-through CPU/request: ${ratio(concurrent, 'naive recorder', 'pass-through').toFixed(2)}× \
with ${CLIENTS} clients, ${ratio(sequential, 'naive recorder', 'pass-through').toFixed(2)}× with 1 client; \
gateway ÷ naive recorder: ${ratio(concurrent, 'gateway', 'naive recorder').toFixed(2)}× and \
${ratio(sequential, 'gateway', 'naive recorder').toFixed(2)}×
- gateway added p50 latency with 1 client: **${addedP50(sequential, 'pass-through').toFixed(2)} ms** over the pass-through \
(recording's own cost; target ≤ 1 ms: ${addedP50(sequential, 'pass-through') <= 1 ? 'met' : 'missed'}), \
${signed(addedP50(sequential, 'naive recorder'))} ms over the naive recorder, \
${addedP50(sequential).toFixed(2)} ms over direct; with ${CLIENTS} clients: ${addedP50(concurrent).toFixed(2)} ms
- SQLite file after the run: ${(dbBytes / 2 ** 20).toFixed(1)} MB for ${recorded} recorded calls \
(${(dbBytes / recorded / 1024).toFixed(1)} KB/call) in ${ROUNDS * CLIENTS} rollouts`);
if ([...concurrent, ...sequential].some((r) => r.phase.errors > 0)) process.exitCode = 1;
