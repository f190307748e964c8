/**
 * The gateway in front of the real vLLM (0.32.0's CPU build) on a tiny model: what recording costs next to the same
 * calls sent to vLLM directly and through a bare pass-through proxy, on the engine alight is built for.
 *
 *   npm run bench:vllm          # ~4 min on 2 cores (vLLM's start is ~1.5 min of it)
 *
 * The proxy and the gateway run in child processes (bench/server.ts) so that their CPU is measured alone; vLLM runs
 * as alight starts it. A call is a chat turn of ~600 prompt tokens and 32 sampled tokens, half of them streamed.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { startVllm } from '../src/serve/vllm.js';
import { PYTHON_DIR } from '../src/setup/python-env.js';
import { ensureVllm } from '../src/setup/vllm-env.js';
import { setupProgress } from '../src/ui/setup-progress.js';
import { Child } from './child.js';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 120);
const CLIENTS = [1, 4];
const dir = mkdtempSync(join(tmpdir(), 'alight-bench-vllm-'));
const python = await ensureVllm('cpu', setupProgress());
execFileSync(python, ['-m', 'alight_worker.tiny', '--out', join(dir, 'model'), '--hidden', '128', '--layers', '4'], {
  cwd: PYTHON_DIR,
  stdio: 'ignore',
});
console.error('starting vLLM (CPU)');
const vllm = await startVllm({
  model: join(dir, 'model'),
  device: 'cpu',
  logFile: join(dir, 'vllm.log'),
  gpuMemoryUtilization: 0.1,
});
const history = 'You are a coding agent. Read the file and run the tests. '.repeat(11);

interface Result {
  latencies: number[];
  cpuMs: number | null;
}

/** `clients` loops of `total` chat calls; half of each client's calls streamed. */
async function load(url: string, key: string, clients: number, total: number): Promise<number[]> {
  const latencies: number[] = [];
  let issued = 0;
  const client = async (c: number): Promise<void> => {
    while (issued < total) {
      const n = issued++;
      const body = JSON.stringify({
        model: vllm.model,
        messages: [{ role: 'user', content: `${history} (call ${n})` }],
        max_tokens: 32,
        min_tokens: 32,
        seed: n,
        stream: n % 2 === 1,
        return_token_ids: true,
        logprobs: true,
      });
      const started = performance.now();
      const res = await request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body,
      });
      const text = await res.body.text();
      if (res.statusCode !== 200) throw new Error(`client ${c}: HTTP ${res.statusCode}: ${text.slice(0, 200)}`);
      latencies.push(performance.now() - started);
    }
  };
  await Promise.all(Array.from({ length: clients }, (_, c) => client(c)));
  return latencies;
}

async function run(config: 'direct' | 'pass-through' | 'gateway', clients: number): Promise<Result> {
  let server: Child | null = null;
  let url = `${vllm.url}/chat/completions`;
  let key = vllm.apiKey;
  if (config === 'pass-through') {
    server = await Child.start(['proxy', vllm.url]);
    url = `${server.url}/chat/completions`;
  } else if (config === 'gateway') {
    process.env.BENCH_UPSTREAM_KEY = vllm.apiKey;
    server = await Child.start(['gateway', vllm.url, mkdtempSync(join(dir, 'gw-'))]);
    key = (await server.ask({ type: 'tokens', n: 1 })).tokens[0];
    url = `${server.url}/r/${key}/v1/chat/completions`;
  }
  await load(url, key, clients, 8);
  const before = await server?.usage();
  const latencies = await load(url, key, clients, REQUESTS);
  const after = await server?.usage();
  await server?.stop();
  return { latencies, cpuMs: before && after ? (after.cpuUs - before.cpuUs) / 1000 / REQUESTS : null };
}

const p50 = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const lines = ['| clients | config | p50 ms | added p50 ms | proxy CPU ms/call |', '|--:|---|--:|--:|--:|'];
const ratios: string[] = [];
try {
  for (const clients of CLIENTS) {
    const rows = new Map<string, Result>();
    for (const config of ['direct', 'pass-through', 'gateway'] as const) {
      console.error(`${clients} client(s): ${config}`);
      rows.set(config, await run(config, clients));
    }
    const base = p50(rows.get('direct')!.latencies);
    for (const [config, r] of rows) {
      lines.push(
        `| ${clients} | ${config} | ${p50(r.latencies).toFixed(1)} ` +
          `| ${config === 'direct' ? '—' : (p50(r.latencies) - base).toFixed(2)} ` +
          `| ${r.cpuMs?.toFixed(2) ?? '—'} |`,
      );
    }
    const gw = rows.get('gateway')!.cpuMs!;
    const pt = rows.get('pass-through')!.cpuMs!;
    ratios.push(
      `${clients} client(s): gateway CPU ${gw.toFixed(2)} ms/call = ` +
        `${(gw / pt).toFixed(2)}× the pass-through's ${pt.toFixed(2)}; ` +
        `added p50 ${(p50(rows.get('gateway')!.latencies) - base).toFixed(1)} ms on vLLM's ${base.toFixed(0)} ms`,
    );
  }
} finally {
  await vllm.stop();
}
console.log(`\n${lines.join('\n')}\n\n${ratios.join('\n')}`);
