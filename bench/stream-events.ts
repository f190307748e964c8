/**
 * What the gateway spends reading one streamed answer's events, against JSON.parse of the same events alone (what
 * any recorder that reads them spends at least): 200 one-token vLLM chat chunks, cut into 8 reads. (The first event of
 * a real stream also carries the prompt ids, read by the byte scanner against the rollout's last ones: the gateway
 * benchmark covers that; here it would flatter the gateway, whose hint skips what JSON.parse must decode.) Steps
 * measured apart: splitting the bytes into events, reading each event's token fields, assembling the answer, and
 * relaying each event without the token fields. Best of 7 rounds of 300 answers each, per answer, in this process.
 *
 *   npm run bench:events
 */
import { openaiChat } from '../src/gateway/protocols/openai-chat.js';
import { readAnswer } from '../src/gateway/protocols/token-fields.js';
import { SseSplitter } from '../src/gateway/sse.js';
import { logprobOf } from '../test/helpers/scripted-upstream.js';

const head = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'scripted-model' };
const chunk = (i: number) => {
  const id = 100 + (i % 20);
  const logprobs = { content: [{ token: String(id), logprob: logprobOf(id, i), bytes: [], top_logprobs: [] }] };
  const delta = i === 0 ? { role: 'assistant', content: 'x' } : { content: 'x' };
  const choice = { index: 0, delta, finish_reason: i === 199 ? 'stop' : null, token_ids: [id], logprobs };
  return { ...head, choices: [choice] };
};
const payloads = Array.from({ length: 200 }, (_, i) => JSON.stringify(chunk(i)));
const bytes = Buffer.from(`${payloads.map((p) => `data: ${p}\n\n`).join('')}data: [DONE]\n\n`);
const reads = Array.from({ length: 8 }, (_, k) =>
  bytes.subarray((k * bytes.length) >> 3, ((k + 1) * bytes.length) >> 3),
);

function eachEvent(take: (data: string) => void): void {
  const splitter = new SseSplitter();
  for (const read of reads) for (const e of splitter.push(read)) if (e.data && e.data !== '[DONE]') take(e.data);
}

const cases: [string, () => void][] = [
  [
    'JSON.parse of each event (baseline)',
    () => {
      for (const p of payloads) JSON.parse(p);
    },
  ],
  ['split into events', () => eachEvent(() => {})],
  ['split + read token fields', () => eachEvent((data) => readAnswer(data, 'scan'))],
  [
    'split + read + assemble (the gateway)',
    () => {
      const assembler = openaiChat.assembler();
      eachEvent((data) => assembler.push(readAnswer(data, 'scan')));
      assembler.result();
    },
  ],
  [
    '… + relayed without the token fields (a harness that did not ask)',
    () => {
      const assembler = openaiChat.assembler();
      const view = openaiChat.view({ model: 'scripted-model', messages: [] }, { model: 'scripted-model' }, 'vllm');
      eachEvent((data) => {
        const read = readAnswer(data, 'scan');
        assembler.push(read);
        view.event(data, read);
      });
      assembler.result();
    },
  ],
];

const best = new Map<string, number>();
for (let round = 0; round < 7; round++) {
  for (const [name, run] of cases) {
    for (let i = 0; i < 50; i++) run();
    const t0 = performance.now();
    for (let i = 0; i < 300; i++) run();
    best.set(name, Math.min(best.get(name) ?? Infinity, ((performance.now() - t0) * 1000) / 300));
  }
}
const base = best.get(cases[0][0])!;
console.log(`## Stream events — ${payloads.length} events, ${(bytes.length / 1024).toFixed(0)} KB per answer\n`);
console.log('| step | µs per answer | ÷ JSON.parse |\n|---|--:|--:|');
for (const [name, us] of best) console.log(`| ${name} | ${us.toFixed(0)} | ${(us / base).toFixed(2)}× |`);
