/**
 * `alight ui` on a large run: a store with 10,000 recorded rollouts of 3 calls each (chat histories of ~1 KB, token
 * ids), the page's API timed over HTTP for what opening the run costs (the runs list, the run, its first and last
 * page of rollouts, the filters, one rollout with its calls, its token rows); the baseline is the same rows read straight from
 * SQLite (the store's own query for a page, in the same process), measured in the same run.
 *
 *   npm run bench:ui          # ~1 min on 2 cores
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { encodeRequest } from '../src/store/request-json.js';
import { Store } from '../src/store/store.js';
import { startUiServer } from '../src/web/server.js';
import { tempDir } from '../test/helpers/gateway.js';

const N = Number(process.env.UI_BENCH_ROLLOUTS ?? 10_000);
const root = tempDir('alight-bench-ui-');
const store = Store.open(join(root, 'alight.db'));
store.ensureRun('big', 'record', {});
const started = performance.now();
store.db.transaction(() => {
  for (let i = 0; i < N; i++) {
    const id = `ro_${i.toString(16).padStart(16, '0')}`;
    store.insertRollout(
      {
        id,
        run: 'big',
        task_id: `t${i % 500}`,
        group_id: `big/g${i % 500}`,
        attempt: 0,
        mode: 'train',
        state: 'succeeded',
        created_at: i,
      },
      `hash-${i}`,
    );
    const messages: { role: string; content: string }[] = [
      { role: 'system', content: 'You are an agent. '.repeat(40) },
    ];
    let prompt: number[] = Array.from({ length: 200 }, (_, k) => k);
    for (let seq = 0; seq < 3; seq++) {
      messages.push({ role: 'user', content: `turn ${seq} of rollout ${i}` });
      const completion = Array.from({ length: 40 }, (_, k) => 1000 + k);
      store.calls.add({
        rolloutId: id,
        seq,
        protocol: 'openai.chat',
        stream: false,
        request: encodeRequest({ model: 'm', messages: [...messages] }),
        response: { choices: [{ message: { role: 'assistant', content: `answer ${seq}` } }] },
        promptIds: prompt,
        completionIds: completion,
        completionLogprobs: completion.map(() => -0.5),
        promptTokens: prompt.length,
        completionTokens: completion.length,
        status: 'ok',
        httpStatus: 200,
        error: null,
        latencyMs: 10,
        modelVersion: 0,
        finishReason: 'stop',
      });
      messages.push({ role: 'assistant', content: `answer ${seq}` });
      prompt = [...prompt, ...completion, 7, 8, 9];
    }
    store.addReward(id, i % 2, null, 'harness');
  }
})();
const built = (performance.now() - started) / 1000;

const server = await startUiServer(store, 0);
const time = async (path: string, rounds = 5): Promise<number> => {
  const samples: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = performance.now();
    const res = await fetch(`${server.url}${path.slice(1)}`);
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`${path}: ${res.status}`);
    samples.push(performance.now() - t0);
  }
  return samples.sort((a, b) => a - b)[Math.floor(rounds / 2)];
};
const baseline = (offset: number): number => {
  const t0 = performance.now();
  for (let r = 0; r < 5; r++) store.rolloutSummaries({ run: 'big', limit: 50, offset });
  return (performance.now() - t0) / 5;
};
const last = `ro_${(N - 1).toString(16).padStart(16, '0')}`;
const rows = [
  ['runs list', await time('/api/runs'), null],
  ['the run (settings, steps)', await time('/api/runs/big'), null],
  ['rollouts, first page of 50', await time('/api/runs/big/rollouts?offset=0&limit=50'), baseline(0)],
  [`rollouts, last page`, await time(`/api/runs/big/rollouts?offset=${N - 50}&limit=50`), baseline(N - 50)],
  ['rollouts, zero-variance groups filter', await time('/api/runs/big/rollouts?filter=zero-variance'), null],
  ['rollouts, merge-breaks filter, first request', await time('/api/runs/big/rollouts?filter=breaks', 1), null],
  ['rollouts, merge-breaks filter, later requests', await time('/api/runs/big/rollouts?filter=breaks'), null],
  ['one rollout with its 3 calls', await time(`/api/rollouts/${last}`), null],
  ['its token rows (merged)', await time(`/api/rollouts/${last}/rows`), null],
] as const;
await server.close();
store.close();
execFileSync('rm', ['-rf', root]);

console.log(`## alight ui benchmark — ${new Date().toISOString().slice(0, 10)}\n`);
console.log(
  `${N} rollouts × 3 calls in one run (store built in ${built.toFixed(1)} s); median of 5 requests over HTTP.\n`,
);
console.log('| request | ms | the store query alone, ms | ratio |');
console.log('|---|--:|--:|--:|');
for (const [what, ms, base] of rows)
  console.log(
    `| ${what} | ${ms.toFixed(1)} | ${base === null ? '–' : base.toFixed(1)} | ${base === null ? '–' : `${(ms / base).toFixed(2)}×`} |`,
  );
const open = rows.slice(0, 3).reduce((a, r) => a + r[1], 0);
console.log(`\nOpening the run (the list, the run, its first page): ${open.toFixed(0)} ms of API time.`);
