/**
 * What translating costs: the gateway's CPU per call and its latency when harnesses speak Anthropic Messages or
 * OpenAI Responses (translated to chat/completions for the upstream and back, event for event) next to harnesses
 * speaking chat/completions itself, on the same load: the same history, the same answers.
 *
 *   npm run bench:protocols     (~2 min on 2 cores; BENCH_ROUNDS / BENCH_REQUESTS override)
 *
 * The chat harness asks for nothing the gateway adds (no token ids, no logprobs), as most do: its answers are
 * reshaped too. Results: bench/BENCHMARKS.md.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Child } from './child.js';
import { loadPhase, type Phase } from './load.js';
import { historyOf, PROMPT_TOKENS, REPLY } from './workload.js';

const CLIENTS = 64;
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 1500);
const WARMUP = 300;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);

type Obj = Record<string, unknown>;
type Message = { role: string; content: string };

interface Shape {
  path: string;
  body(history: Message[], call: number, stream: boolean): Obj;
  /** The protocol's last event (or a whole answer's closing brace). */
  done(text: string, stream: boolean): boolean;
}

const ask = (call: number): Message => ({
  role: 'user',
  content: `Turn ${call}: run the tests again and fix what fails.`,
});
const shapes: Record<'chat, asking for tokens' | 'chat/completions' | 'messages' | 'responses', Shape> = {
  // What bench/gateway.ts measures: the harness asks for the token fields itself, so its answers pass unchanged.
  'chat, asking for tokens': {
    path: 'chat/completions',
    body: (h, call, stream) => ({
      model: 'scripted-model',
      stream,
      max_tokens: 256,
      logprobs: true,
      return_token_ids: true,
      messages: [...h, ask(call)],
    }),
    done: (text, stream) => (stream ? text.endsWith('data: [DONE]\n\n') : text.endsWith('}')),
  },
  'chat/completions': {
    path: 'chat/completions',
    body: (h, call, stream) => ({ model: 'agent', stream, max_tokens: 256, messages: [...h, ask(call)] }),
    done: (text, stream) => (stream ? text.endsWith('data: [DONE]\n\n') : text.endsWith('}')),
  },
  messages: {
    path: 'messages',
    body: (h, call, stream) => ({
      model: 'agent',
      stream,
      max_tokens: 256,
      system: h[0].content,
      messages: [...h.slice(1), ask(call)],
    }),
    done: (text, stream) => (stream ? text.includes('event: message_stop') : text.endsWith('}')),
  },
  responses: {
    path: 'responses',
    body: (h, call, stream) => ({
      model: 'agent',
      stream,
      max_output_tokens: 256,
      instructions: h[0].content,
      input: [...h.slice(1), ask(call)],
    }),
    done: (text, stream) => (stream ? text.includes('event: response.completed') : text.endsWith('}')),
  },
};
type Name = keyof typeof shapes;

const histories = Array.from({ length: CLIENTS }, (_, i) => JSON.parse(`[${historyOf(i)}]`) as Message[]);
let callNo = 0;

async function measure(name: Name, upstreamUrl: string, dir: string): Promise<{ phase: Phase; cpuUs: number }> {
  const shape = shapes[name];
  const prof = process.env.BENCH_CPU_PROF;
  const gateway = await Child.start(
    ['gateway', upstreamUrl, dir],
    prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}/${name.replace(/\W+/g, '-')}`] : [],
  );
  const { tokens } = await gateway.ask({ type: 'tokens', n: CLIENTS });
  const spec = {
    urlOf: (c: number) => `${gateway.url}/r/${tokens[c]}/v1/${shape.path}`,
    clients: CLIENTS,
    limitMs: 120_000,
    bodyOf: (c: number, stream: boolean) => JSON.stringify(shape.body(histories[c], callNo++, stream)),
    complete: shape.done,
  };
  await loadPhase({ ...spec, total: WARMUP });
  const before = await gateway.usage();
  const phase = await loadPhase({ ...spec, total: REQUESTS });
  const cpuUs = (await gateway.usage()).cpuUs - before.cpuUs;
  await gateway.stop();
  return { phase, cpuUs };
}

const dir = mkdtempSync(join(tmpdir(), 'alight-bench-'));
const upstream = await Child.start(['upstream']);
const pooled = new Map<Name, { done: number; errors: number; cpuUs: number; ms: number[] }>();
for (let round = 1; round <= ROUNDS; round++) {
  for (const name of Object.keys(shapes) as Name[]) {
    console.error(`round ${round}/${ROUNDS}: ${name}`);
    const { phase, cpuUs } = await measure(name, upstream.url, dir);
    const p = pooled.get(name) ?? { done: 0, errors: 0, cpuUs: 0, ms: [] };
    pooled.set(name, {
      done: p.done + phase.done,
      errors: p.errors + phase.errors,
      cpuUs: p.cpuUs + cpuUs,
      ms: [...p.ms, ...phase.whole, ...phase.stream],
    });
  }
}
await upstream.stop();
rmSync(dir, { recursive: true, force: true });

const p50 = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const cpuPerCall = (name: Name): number => pooled.get(name)!.cpuUs / 1000 / pooled.get(name)!.done;
const rows = (Object.keys(shapes) as Name[])
  .map(
    (n) =>
      `| ${n} | ${pooled.get(n)!.done} / ${pooled.get(n)!.errors} | ${cpuPerCall(n).toFixed(2)} | ` +
      `${(cpuPerCall(n) / cpuPerCall('chat/completions')).toFixed(2)}× | ${p50(pooled.get(n)!.ms).toFixed(1)} |`,
  )
  .join('\n');
console.log(`## Translated protocols — ${new Date().toISOString().slice(0, 10)}

Machine: ${cpus().length} × ${cpus()[0]?.model.trim()}. Same load for each protocol: ${CLIENTS} clients, \
~50 KB history, answers of
${REPLY.length + 1} tokens (one per chunk when streamed) with ${PROMPT_TOKENS} prompt ids, half streamed; \
${ROUNDS} rounds × ${REQUESTS} calls
after ${WARMUP} warm-up, each in a fresh gateway process.

| harness protocol | calls ok / errors | gateway CPU ms/call | ÷ chat/completions | p50 ms |
|---|--:|--:|--:|--:|
${rows}`);
if ([...pooled.values()].some((p) => p.errors > 0)) process.exitCode = 1;
