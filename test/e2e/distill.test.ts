import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { distilBatch, type ScoringEngine } from '../../src/distill/score.js';
import { buildBatch, type RolloutRows } from '../../src/samples/batch.js';
import { envPython } from '../../src/setup/python-env.js';
import { Store } from '../../src/store/store.js';
import { Worker } from '../../src/worker/client.js';
import { servingSettings } from '../../src/worker/settings.js';
import { alight } from '../helpers/cli.js';
import { tempDir } from '../helpers/gateway.js';
import { tinyModel } from '../helpers/tiny-model.js';

// On-policy distillation: the teacher's log-probabilities of the student's own sampled tokens, through real torch
// workers (the student's engine samples, a second worker serves the teacher), then `alight train --teacher` as a user
// runs it: the demo's seed-made model taught by a checkpoint RL trained on the demo's task, the task reward off.
const ROOT = new URL('../../', import.meta.url).pathname;
const DEMO = ['--tasks', join(ROOT, 'examples/vowels/tasks.jsonl'), '-n', '8', '--batch-size', '4'];
const HARNESS = ['--', 'node', join(ROOT, 'examples/vowels/harness.mjs')];

type Served = { worker: Worker; engine: ScoringEngine };
const started: Worker[] = [];
async function serve(model: string): Promise<Served> {
  const worker = Worker.start({ python: envPython(), logFile: join(tempDir(), 'worker.log') });
  started.push(worker);
  const init = await worker.call('init', servingSettings(model), 600_000);
  return { worker, engine: init.endpoints[0] };
}

/** A group of `n` answers the student samples to one prompt: rows as merge makes them (prompt, then sampled ids). */
async function sampledGroup(student: ScoringEngine, n: number): Promise<RolloutRows[]> {
  const group: RolloutRows[] = [];
  for (let i = 0; i < n; i++) {
    const res = await fetch(`${student.url}/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'write vowels: ', max_tokens: 12, logprobs: 1, return_token_ids: true, seed: i }),
    });
    const choice = (await res.json()).choices[0];
    const prompt: number[] = choice.prompt_token_ids;
    const ids: number[] = choice.token_ids;
    const row = {
      tokens: Int32Array.from([...prompt, ...ids]),
      mask: Uint8Array.from([...prompt.map(() => 0), ...ids.map(() => 1)]),
      logprobs: Float32Array.from([...prompt.map(() => 0), ...choice.logprobs.token_logprobs]),
      promptLength: prompt.length,
      calls: [1],
    };
    group.push({ rolloutId: `r${i}`, groupId: 'g', reward: 0, rows: [row] });
  }
  return group;
}

const batchOf = (rows: RolloutRows[]) =>
  buildBatch(rows, { advantage: 'grpo', lossNorm: 'per-rollout-mean', missingReward: 'zero', maxResponseTokens: 64 });

/** A proxy in front of `engine` that counts the requests it passes on. */
async function counting(engine: ScoringEngine): Promise<{ engine: ScoringEngine; bodies: unknown[]; server: Server }> {
  const bodies: unknown[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', async () => {
      bodies.push(JSON.parse(body));
      const answer = await fetch(`${engine.url}${req.url!.replace(/^\/v1/, '')}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return { engine: { url, model: engine.model }, bodies, server };
}

describe('on-policy distillation: the teacher scores the student’s rows', () => {
  let model: string;
  let student: Served;
  let twin: Served;
  let other: Served;
  let group: RolloutRows[];
  beforeAll(async () => {
    model = tinyModel(0);
    const copy = join(tempDir(), 'twin');
    cpSync(model, copy, { recursive: true });
    [student, twin, other] = await Promise.all([serve(model), serve(copy), serve(tinyModel(1))]);
    group = await sampledGroup(student.engine, 4);
  }, 600_000);
  afterAll(async () => {
    for (const w of started) await w.stop();
  });

  it('a teacher with the student’s weights gives no signal (|Â| < 1e-4), with a request per row', async () => {
    const batch = batchOf(group);
    expect(batch.tensors.advantages.every((a) => a === 0)).toBe(true); // the task reward says nothing
    const proxy = await counting(twin.engine);
    try {
      const m = await distilBatch(batch.tensors, proxy.engine, { coef: 1, concurrency: 2, timeoutMs: 60_000 });
      expect(proxy.bodies.length).toBe(4);
      expect(m.teacher_calls).toBe(4);
      expect(m.teacher_scored_share).toBe(1);
      const max = Math.max(...batch.tensors.advantages.map(Math.abs));
      expect(max).toBeLessThan(1e-4);
      expect(Math.abs(m.teacher_kl!)).toBeLessThan(1e-4);
    } finally {
      proxy.server.close();
    }
  });

  it("adds λ·(the teacher's forward pass − the student's) on sampled tokens only; shifted by one it would not", async () => {
    const batch = batchOf(group);
    const m = await distilBatch(batch.tensors, other.engine, { coef: 0.5, concurrency: 4, timeoutMs: 60_000 });
    // The KL is estimated on the student's own samples (the mean log-ratio), so between two near-uniform random models
    // it may fall on either side of 0: what tells it from the twin's (< 1e-4) is its size.
    expect(Math.abs(m.teacher_kl!)).toBeGreaterThan(1e-3);
    const t = batch.tensors;
    for (let r = 0; r < group.length; r++) {
      const at = Number(t.row_offsets[r]);
      const end = Number(t.row_offsets[r + 1]);
      // The teacher's own recomputation of the row (its worker's forward pass), positions 1… of the row.
      const forward = (await other.worker.call('score', { ids: [...t.input_ids.subarray(at, end)] }, 60_000)).logprobs;
      const implied: number[] = [];
      const direct: number[] = [];
      const shifted: number[] = [];
      for (let k = 1; k < end - at; k++) {
        if (t.loss_mask[at + k] === 0) {
          expect(t.advantages[at + k]).toBe(0);
          continue;
        }
        implied.push(t.advantages[at + k] / 0.5 + t.rollout_logprobs[at + k]);
        direct.push(forward[k - 1]);
        shifted.push(forward[k - 2]);
      }
      for (const [i, v] of implied.entries()) expect(Math.abs(v - direct[i])).toBeLessThan(1e-4);
      expect(Math.max(...implied.map((v, i) => Math.abs(v - shifted[i])))).toBeGreaterThan(1e-3);
    }
  });

  it('λ = 0 scores (the KL is measured) and leaves the batch byte for byte as it was', async () => {
    const plain = batchOf(group);
    const scored = batchOf(group);
    const m = await distilBatch(scored.tensors, other.engine, { coef: 0, concurrency: 2, timeoutMs: 60_000 });
    expect(Math.abs(m.teacher_kl!)).toBeGreaterThan(1e-3);
    for (const [name, tensor] of Object.entries(plain.tensors))
      expect(Buffer.from(scored.tensors[name].buffer).equals(Buffer.from(tensor.buffer)), name).toBe(true);
  });
});

describe('alight train --teacher', () => {
  it('refuses a teacher with another vocabulary, or the student itself, before step 1', async () => {
    const dir = tempDir();
    const model = tinyModel(0);
    // The same model, its tokenizer's "a" and "e" swapped: text tokenises to other ids.
    const swapped = join(dir, 'swapped');
    cpSync(model, swapped, { recursive: true });
    const file = join(swapped, 'tokenizer.json');
    const tokenizer = JSON.parse(readFileSync(file, 'utf8'));
    const vocab = tokenizer.model.vocab as Record<string, number>;
    [vocab.a, vocab.e] = [vocab.e, vocab.a];
    writeFileSync(file, JSON.stringify(tokenizer));
    const copy = join(dir, 'copy');
    cpSync(model, copy, { recursive: true });
    const run = (teacher: string, name: string) =>
      alight(['train', '--model', model, ...DEMO, '--steps', '1', '--run', name, '--teacher', teacher, ...HARNESS], {
        cwd: dir,
        timeoutMs: 600_000,
      });
    const vocabulary = await run(swapped, 'swapped');
    expect(vocabulary.code, vocabulary.stderr).toBe(2);
    expect(vocabulary.stderr).toMatch(/--teacher: the teacher's tokenizer is not the student's/);
    const itself = await run(model, 'itself');
    expect(itself.code).toBe(2);
    expect(itself.stderr).toMatch(/is the student itself/);
    const twin = await run(copy, 'twin');
    expect(twin.code).toBe(2);
    expect(twin.stderr).toMatch(/scores the probe exactly as the student does/);
    const off = await alight(['train', '--model', model, ...DEMO, '--task-reward', 'off', ...HARNESS], { cwd: dir });
    expect(off.code).toBe(2);
    expect(off.stderr).toMatch(/--task-reward off leaves nothing to learn from/);
    for (const out of [vocabulary, itself, twin, off]) expect(out.stderr).not.toMatch(/\n\s+at /);
    // Nothing trained: no step was stored.
    const store = Store.open(join(dir, '.alight', 'alight.db'));
    try {
      for (const name of ['swapped', 'itself', 'twin']) expect(store.trainSteps(name)).toEqual([]);
    } finally {
      store.close();
    }
  }, 1_200_000);

  it('distils: with the task reward off, a fresh student moves to the trained teacher and reaches its reward', async () => {
    const dir = tempDir();
    const model = tinyModel(0);
    // Small and fast (bench/distill.ts runs the demo's full curve, and RL beside it): the teacher is the demo's task
    // learned by RL at a higher rate for 6 steps (reward ~0.06 → ~0.65), the student distils from it for 5.
    const fast = ['--lr', '0.03', '--seed', '0'];
    const rl = await alight(['train', '--model', model, ...DEMO, ...fast, '--steps', '6', '--run', 'rl', ...HARNESS], {
      cwd: dir,
      timeoutMs: 1_200_000,
    });
    expect(rl.code, rl.stderr).toBe(0);
    const checkpoint = join(dir, '.alight', 'runs', 'rl', 'checkpoints', 'step-5');
    const distilled = await alight(
      [
        ...['train', '--model', model, ...DEMO, ...fast, '--steps', '5', '--run', 'student'],
        ...['--teacher', checkpoint, '--task-reward', 'off', ...HARNESS],
      ],
      { cwd: dir, timeoutMs: 1_200_000 },
    );
    expect(distilled.code, distilled.stderr).toBe(0);
    const store = Store.open(join(dir, '.alight', 'alight.db'));
    try {
      const steps = store.trainSteps('student');
      const teacher = store.trainSteps('rl').at(-1)!.metrics.reward_mean as number;
      const [student, kl] = ['reward_mean', 'teacher_kl'].map((name) => steps.map((s) => s.metrics[name] as number));
      const summary = `teacher ${teacher.toFixed(2)}; student ${student.map((r) => r.toFixed(2))}; kl ${kl.map((k) => k.toFixed(2))}`;
      // Its own task reward (recorded, not trained on) climbs to the teacher's; the KL to the teacher on its own
      // samples, which the loss lowers, falls (~3 nats to under 0.1 here).
      expect(student.at(-1)!, summary).toBeGreaterThanOrEqual(teacher - 0.15);
      expect(student.at(-1)! - student[0], summary).toBeGreaterThan(0.3);
      expect(kl.at(-1)!, summary).toBeLessThan(kl[0] / 4);
      for (const s of steps) {
        expect(s.metrics.teacher_calls).toBe(s.metrics.rows);
        expect(s.metrics.teacher_scored_share).toBe(1);
      }
      process.stdout.write(`distillation: ${summary}\n`);
    } finally {
      store.close();
    }
  }, 2_400_000);
});
