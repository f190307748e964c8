import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { alight } from '../helpers/cli.js';
import { tinyModel } from '../helpers/tiny-model.js';
import { HARNESS, project, stepsOf, trainArgs } from '../helpers/train-project.js';

// `alight train --lora-rank` end to end on CPU: the torch worker trains an adapter on a tiny Llama through the
// held-back harness; checkpoints hold the adapter alone, a resumed run continues it exactly.
let model: string;
beforeAll(() => {
  model = tinyModel(1);
}, 120_000);

const tasks = [
  { id: 'count', prompt: 'Count to three.' },
  { id: 'year', prompt: 'What year is it?' },
];
// One harness at a time: batched generation is exact only up to float rounding, and its batches depend on when the
// harnesses' calls arrive, so only then are two runs with the same seed equal to the last token.
const lora = ['--lora-rank', '4', '--save-every', '2', '--concurrency', '1'];

describe('alight train with LoRA', () => {
  it('learns the held-back task as full weights do, the adapter on the output layer too', async () => {
    const p = project(tasks);
    // This model is made from a seed: its output layer is where a task is learned (docs/training.md, the demo with
    // LoRA), so the adapter covers it; the worker serves it exactly.
    const args = ['--lora-rank', '8', '--lora-targets', 'all-linear,lm_head', '--lr', '0.02', '--run', 'learn'];
    const res = await alight([...trainArgs(model, p, 12), ...args, '--', process.execPath, HARNESS], {
      cwd: p.dir,
      timeoutMs: 300_000,
    });
    expect(res.code, res.stderr).toBe(0);
    const rewards = stepsOf(p.db, 'learn').map((s) => s.metrics.reward_mean as number);
    const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / xs.length;
    // The bar train.test.ts sets full weights on the same task.
    expect(mean(rewards.slice(-3)), `rewards ${rewards.map((r) => r.toFixed(2)).join(' ')}`).toBeGreaterThan(
      mean(rewards.slice(0, 3)) + 0.15,
    );
    const last = join(p.dir, '.alight', 'runs', 'learn', 'checkpoints', 'step-11');
    expect(readdirSync(last)).toContain('adapter_model.safetensors');
  }, 600_000);

  it('checkpoints the adapter alone, and a run resumed from one matches an uninterrupted run step for step', async () => {
    const p = project(tasks);
    const run = (args: string[]) =>
      alight([...args, '--', process.execPath, HARNESS], { cwd: p.dir, timeoutMs: 300_000 });
    const whole = await run([...trainArgs(model, p, 4), ...lora, '--run', 'whole']);
    expect(whole.code, whole.stderr).toBe(0);
    const part = await run([...trainArgs(model, p, 2), ...lora, '--run', 'part']);
    expect(part.code, part.stderr).toBe(0);
    const resumed = await run(['train', '--resume', 'part', '--steps', '4']);
    expect(resumed.code, resumed.stderr).toBe(0);

    const checkpoint = join(p.dir, '.alight', 'runs', 'whole', 'checkpoints', 'step-1');
    expect(readdirSync(checkpoint)).toEqual(
      expect.arrayContaining(['adapter_model.safetensors', 'adapter_config.json']),
    );
    expect(existsSync(join(checkpoint, 'model.safetensors'))).toBe(false);
    const adapter = statSync(join(checkpoint, 'adapter_model.safetensors')).size;
    expect(adapter).toBeLessThan(0.2 * statSync(join(model, 'model.safetensors')).size);

    const rewards = (r: string) => stepsOf(p.db, r).map((s) => [s.step, s.metrics.reward_mean, s.metrics.version]);
    expect(rewards('part')).toEqual(rewards('whole'));
    expect(rewards('whole')).toHaveLength(4);
    // The adapter moved the policy: not every step sampled what the base model samples.
    expect(new Set(rewards('whole').map((r) => r[1])).size).toBeGreaterThan(1);

    // `alight models merge`: base + adapter as one folder (its logits are checked in python/tests/test_lora.py).
    const merged = await alight(['models', 'merge', '--adapter', checkpoint, '--out', join(p.dir, 'merged'), '--json']);
    expect(merged.code, merged.stderr).toBe(0);
    expect(JSON.parse(merged.stdout)).toMatchObject({ base: model, rank: 4, layers: 14 });
    expect(readdirSync(join(p.dir, 'merged'))).toEqual(expect.arrayContaining(['config.json', 'model.safetensors']));
    const notAdapter = await alight(['models', 'merge', '--adapter', model, '--out', join(p.dir, 'm2')]);
    expect([notAdapter.code, notAdapter.stderr]).toEqual([3, expect.stringMatching(/no LoRA adapter there/)]);
  }, 600_000);

  it('refuses what cannot work, before starting anything', async () => {
    const p = project(tasks);
    const refused = async (args: string[], message: RegExp, code = 2) => {
      const res = await alight([...trainArgs(model, p, 1), ...args, '--', process.execPath, HARNESS], { cwd: p.dir });
      expect(res.code, res.stderr).toBe(code);
      expect(res.stderr).toMatch(message);
      expect(res.stderr).not.toMatch(/\n\s+at /); // no stack trace
    };
    await refused(['--lora-from', p.dir], /no LoRA adapter there \(adapter_config\.json\)/);
    const onOutput = ['--lora-rank', '4', '--lora-targets', 'all-linear,lm_head', '--serve-vllm'];
    await refused(onOutput, /an adapter on lm_head is served by the torch worker alone: vLLM drops its delta/);
    await refused(['--lora-rank', '1000'], /train\.lora\.rank: Too big: expected number to be <=512/, 3);
  }, 120_000);
});
