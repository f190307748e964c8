import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import type { TrainConfig } from '../../src/config/train-schema.js';
import { buildBatch } from '../../src/samples/batch.js';
import { readSafetensors, writeSafetensors } from '../../src/samples/safetensors.js';
import { envPython } from '../../src/setup/python-env.js';
import { verlPython } from '../../src/setup/verl-env.js';
import { type VerlPlan, verlHost, verlPlan } from '../../src/train/verl-config.js';
import { startWorker } from '../../src/train/workers.js';
import type { Worker } from '../../src/worker/client.js';
import { tempDir } from '../helpers/gateway.js';
import { tinyModel } from '../helpers/tiny-model.js';

// verl 0.9.1's own RL workers, for real, on this machine's CPU (alight's platform plugin, alight_worker/verl/cpu.py):
// here its FSDP actor and the torch worker make the same update from one batch. Whole runs of `alight train --backend
// verl` (the vLLM servers synced by verl's checkpoint engine, LoRA, the served-policy check and its fault injection, a
// Ray node killed mid-run, verl's checkpoints loaded back): test/e2e/verl-nodes.test.ts. The demo-scale learning run
// is `ALIGHT_DEMO_BACKEND=verl npm run demo`.

let model: string;
beforeAll(() => {
  model = tinyModel(2);
}, 120_000);

describe('one batch, two trainers', () => {
  it("gives the same loss, gradient norm and updated weights on the torch worker and on verl's FSDP actor " +
    '(same weights, same settings, float32 on the CPU)', async () => {
    const dir = tempDir();
    const batch = writeBatch(join(dir, 'batch.safetensors'));
    // A clip that bites (the norm is 0.059 here) and weight decay, so that both settings are compared; a KL penalty,
    // so that verl's reference worker is built and scores the batch (its KL is 0 at the first step on both).
    const settings = { model, seed: 0, optimiser: { lr: 0.01, maxGradNorm: 0.05, weightDecay: 0.1, klCoef: 0.05 } };
    const torch = await updateOnce(configSchema.parse({ train: settings }).train, envPython(), batch, dir);
    // The torch worker's ratio is to the engine's log-probs (its own server samples what it trains): verl's too here.
    const verl1 = { ...settings, backend: 'verl', verl: { gpus: 1, oldLogprobs: 'rollout' } };
    const verlTrain = configSchema.parse({ train: verl1 }).train;
    const plan = verlPlan(verlTrain, verlHost(verlTrain, verlPython()));
    const verl = await updateOnce(verlTrain, verlPython()!, batch, dir, plan);
    expect(verl.metrics.grad_norm).toBeCloseTo(torch.metrics.grad_norm!, 5);
    expect(verl.metrics.loss).toBeCloseTo(torch.metrics.loss!, 6);
    for (const m of [verl.metrics, torch.metrics]) expect(m.kl_ref).toBeLessThan(1e-9);
    const names = Object.keys(torch.weights).filter((n) => n in verl.weights);
    expect(names.length).toBeGreaterThanOrEqual(Object.keys(torch.weights).length - 1); // lm_head, when tied
    let largest = 0;
    let moved = 0;
    let sum = 0;
    let count = 0;
    for (const name of names) {
      const [a, b, before] = [torch.weights[name], verl.weights[name], readWeights(model)[name]];
      expect(b.length).toBe(a.length);
      for (let i = 0; i < a.length; i++) {
        largest = Math.max(largest, Math.abs(a[i] - b[i]));
        sum += Math.abs(a[i] - b[i]);
        count++;
        moved = Math.max(moved, Math.abs(a[i] - before[i]));
      }
    }
    // Adam's first step moves a weight by up to lr (plus the decay): both trainers moved them that far, alike.
    expect(moved).toBeGreaterThan(0.005);
    // Measured: the mean difference 2e-9, the largest 1.3e-5. Adam's first step divides each gradient by its own size,
    // so an element whose gradient is near Adam's epsilon carries float32 rounding into its update (at most lr).
    expect(sum / count).toBeLessThan(1e-7);
    expect(largest).toBeLessThan(1e-4);
    // verl's vLLM server (started by the actor's init, synced once) listened on loopback, not the machine's address.
    expect(readFileSync(join(dir, 'verl.log'), 'utf8')).toMatch(/vLLM server\(s\) at 127\.0\.0\.1:\d+/);
  }, 600_000);
});

/**
 * One update on `batch` by a worker started as `alight train` starts it (verl: with the plan's overrides and
 * environment): its metrics and its weights after, as saved.
 */
async function updateOnce(c: TrainConfig, python: string, batch: string, dir: string, plan?: VerlPlan) {
  const started: Worker[] = [];
  const logFile = join(dir, `${c.backend}.log`);
  const signal = new AbortController().signal;
  try {
    const { worker } = await startWorker(
      { python, logFile, c, signal, overrides: plan?.overrides, env: plan?.env },
      started,
    );
    const { metrics } = await worker.call('train_step', { batch_path: batch, step: 0 }, 600_000);
    const out = join(dir, c.backend);
    // verl saves a checkpoint, with a Hugging Face folder in it; the torch worker only the weights, when asked.
    await worker.call('save', c.backend === 'verl' ? { path: out } : { path: out, weights_only: true }, 600_000);
    return { metrics, weights: readWeights(c.backend === 'verl' ? join(out, 'huggingface') : out) };
  } finally {
    for (const w of started) await w.stop();
  }
}

function readWeights(folder: string): Record<string, Float32Array> {
  return readSafetensors(join(folder, 'model.safetensors')).tensors as Record<string, Float32Array>;
}

/**
 * A step's batch as alight builds it (GRPO advantages, per-rollout loss weights): a group of four rollouts of the tiny
 * model's vocabulary, one of them two turns with an observation between (masked out), rewards that differ.
 */
function writeBatch(file: string): string {
  const row = (prompt: number[], parts: [number[], 0 | 1][]) => {
    const tokens = [...prompt, ...parts.flatMap(([t]) => t)];
    const mask = [...prompt.map(() => 0), ...parts.flatMap(([t, m]) => t.map(() => m))];
    return {
      tokens: Int32Array.from(tokens),
      mask: Uint8Array.from(mask),
      logprobs: Float32Array.from(mask.map((m, i) => (m ? -1 - (i % 5) / 10 : 0))),
      promptLength: prompt.length,
      calls: [0],
    };
  };
  const prompt = [1, 20, 21, 22, 23, 2, 1, 30];
  const rollouts = [
    [row(prompt, [[[5, 6, 7, 8, 9, 2], 1]])],
    [row(prompt, [[[10, 11, 12, 2], 1]])],
    [
      row(prompt, [
        [[40, 41], 1],
        [[2, 1, 50, 51], 0],
        [[42, 43, 44, 2], 1],
      ]),
    ],
    [row(prompt, [[[60, 61, 62, 63, 64, 65, 66, 2], 1]])],
  ].map((rows, i) => ({ rolloutId: `r${i}`, groupId: 'g', reward: [1, 0, 0.5, 0][i], rows }));
  const c = configSchema.parse({}).train;
  const built = buildBatch(rollouts, { ...c.batch, maxResponseTokens: 64 });
  writeSafetensors(file, built.tensors, { alight: JSON.stringify({ version: 1 }) });
  return file;
}
