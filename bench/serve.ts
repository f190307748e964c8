/**
 * `alight serve` benchmark: tokens/s and time to first token for 1, 4 and 16 concurrent streams, over HTTP (the
 * CLI's server in its own process, as users run it) and in-process through the same Engine without HTTP (the floor).
 *
 *   npm run bench:serve          # ~3 min on 2 cores; fetches gemma3-270m on first use
 *   SERVE_BENCH_TOKENS / SERVE_BENCH_ROUNDS override the tokens per stream (64) and rounds per level (2);
 *   SERVE_BENCH_LEVELS (1,4,16) the concurrency levels; SERVE_BENCH_THREADS the llama.cpp threads (the cores).
 */
import { availableParallelism, cpus } from 'node:os';
import { Engine } from '../src/serve/engine.js';
import { startManagedServe } from '../src/serve/managed.js';
import { resolveModel } from '../src/serve/models.js';

const TOKENS = Number(process.env.SERVE_BENCH_TOKENS ?? 64);
const ROUNDS = Number(process.env.SERVE_BENCH_ROUNDS ?? 2);
const LEVELS = (process.env.SERVE_BENCH_LEVELS ?? '1,4,16').split(',').map(Number);
const THREADS = Number(process.env.SERVE_BENCH_THREADS ?? availableParallelism());
const CTX = 512;
const question = (i: number): string => `Question ${i}: describe the weather in a city you like.`;

interface Stream {
  ttftMs: number;
  tokens: number;
}
interface Level {
  streams: Stream[];
  wallMs: number;
}

async function inProcess(engine: Engine, clients: number, round: number): Promise<Level> {
  const started = performance.now();
  const streams = await Promise.all(
    Array.from({ length: clients }, async (_, i) => {
      const t0 = performance.now();
      let ttft = 0;
      let tokens = 0;
      const { prompt } = engine.renderChat([{ role: 'user', text: question(i) }]);
      for await (const _token of engine.generate(
        prompt,
        { temperature: 1, seed: round * 100 + i, maxTokens: TOKENS },
        new AbortController().signal,
      )) {
        if (tokens++ === 0) ttft = performance.now() - t0;
      }
      return { ttftMs: ttft, tokens };
    }),
  );
  return { streams, wallMs: performance.now() - started };
}

async function overHttp(url: string, clients: number, round: number): Promise<Level> {
  const started = performance.now();
  const streams = await Promise.all(
    Array.from({ length: clients }, async (_, i) => {
      const t0 = performance.now();
      const res = await fetch(`${url}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          messages: [{ role: 'user', content: question(i) }],
          max_tokens: TOKENS,
          temperature: 1,
          seed: round * 100 + i,
          stream: true,
          return_token_ids: true,
          logprobs: true,
        }),
      });
      let ttft = 0;
      let tokens = 0;
      let buffer = '';
      for await (const bytes of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += Buffer.from(bytes).toString('utf8');
        let end: number;
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          const data = buffer.slice(6, end);
          buffer = buffer.slice(end + 2);
          if (data === '[DONE]') continue;
          const n = (JSON.parse(data).choices?.[0]?.token_ids ?? []).length;
          if (n && tokens === 0) ttft = performance.now() - t0;
          tokens += n;
        }
      }
      return { ttftMs: ttft, tokens };
    }),
  );
  return { streams, wallMs: performance.now() - started };
}

function summary(levels: Level[]): { tokensPerS: number; ttftP50: number } {
  const tokens = levels.reduce((a, l) => a + l.streams.reduce((b, s) => b + s.tokens, 0), 0);
  const wall = levels.reduce((a, l) => a + l.wallMs, 0);
  const ttfts = levels.flatMap((l) => l.streams.map((s) => s.ttftMs)).sort((a, b) => a - b);
  return { tokensPerS: (tokens / wall) * 1000, ttftP50: ttfts[Math.floor(ttfts.length / 2)] };
}

const model = await resolveModel('gemma3-270m', (l) => console.error(l));
const results: Record<string, Record<number, { tokensPerS: number; ttftP50: number }>> = { 'in-process': {}, http: {} };

const engine = await Engine.load({
  modelPath: model,
  contextSize: CTX,
  parallel: Math.max(...LEVELS),
  threads: THREADS,
});
await inProcess(engine, 1, 99);
for (const c of LEVELS) {
  const levels: Level[] = [];
  for (let r = 0; r < ROUNDS; r++) levels.push(await inProcess(engine, c, r));
  results['in-process'][c] = summary(levels);
  console.error(`in-process ×${c}: done`);
}
await engine.close();

const server = await startManagedServe(model, [
  '--parallel',
  String(Math.max(...LEVELS)),
  '--ctx',
  String(CTX),
  '--threads',
  String(THREADS),
]);
await overHttp(server.url, 1, 99);
for (const c of LEVELS) {
  const levels: Level[] = [];
  for (let r = 0; r < ROUNDS; r++) levels.push(await overHttp(server.url, c, r));
  results.http[c] = summary(levels);
  console.error(`http ×${c}: done`);
}
await server.stop();

console.log(`## alight serve benchmark — ${new Date().toISOString().slice(0, 10)}\n`);
console.log(
  `Machine: ${availableParallelism()} × ${cpus()[0]?.model.trim()}, Node ` +
    `${process.version}, ${THREADS} llama.cpp threads. Model: gemma-3-270m Q4_K_M, ` +
    `context ${CTX}, --parallel ${Math.max(...LEVELS)}, ${TOKENS} tokens per ` +
    `stream (fewer when the model ends its turn), ${ROUNDS} rounds per level.\n`,
);
console.log(
  '| streams | in-process tokens/s | HTTP tokens/s | HTTP overhead | in-process TTFT p50 ms | HTTP TTFT p50 ms |',
);
console.log('|--:|--:|--:|--:|--:|--:|');
for (const c of LEVELS) {
  const a = results['in-process'][c];
  const b = results.http[c];
  const overhead = (1 - b.tokensPerS / a.tokensPerS) * 100;
  console.log(
    `| ${c} | ${a.tokensPerS.toFixed(1)} | ${b.tokensPerS.toFixed(1)} | ` +
      `${overhead.toFixed(1)}% | ${a.ttftP50.toFixed(0)} | ${b.ttftP50.toFixed(0)} |`,
  );
}
