import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { trainingWorkerSettings } from '../../src/train/workers.js';
import { servingSettings, workerSettingsJsonSchema } from '../../src/worker/settings.js';

const train = (t: Record<string, unknown> = {}) => configSchema.parse({ train: { model: '/m', ...t } }).train;

describe("the worker's settings", () => {
  it('are checked by the Python worker against the schema TS sends them under (npm run worker:schema writes it)', () => {
    const file = new URL('../../python/alight_worker/settings.schema.json', import.meta.url);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(workerSettingsJsonSchema());
  });

  it("carry a run's settings whole: RL's update, SFT's, LoRA's adapter and verl's", () => {
    const rl = trainingWorkerSettings({
      c: train({ optimiser: { lr: 3e-6, klCoef: 0.1 }, rollouts: { concurrency: 4 } }),
    });
    expect(rl).toMatchObject({ backend: 'torch', model: '/m', seed: 0, max_batch: 4, threads: null });
    expect(rl.backend === 'torch' && rl.training).toMatchObject({
      objective: 'rl',
      lr: 3e-6,
      kl_coef: 0.1,
      lora: null,
    });
    const sft = trainingWorkerSettings({
      c: train({ optimiser: { klCoef: 0.1, isCorrection: 'token' } }),
      objective: 'sft',
    });
    expect(sft.backend === 'torch' && sft.training).toMatchObject({
      objective: 'sft',
      kl_coef: 0,
      is_correction: 'none',
    });
    const lora = trainingWorkerSettings({ c: train({ lora: { rank: 8, targets: 'q_proj, v_proj,' } }) });
    expect(lora.backend === 'torch' && lora.training?.lora).toEqual({
      rank: 8,
      alpha: 32,
      dropout: 0,
      targets: ['q_proj', 'v_proj'],
      from: null,
    });
    const verl = trainingWorkerSettings({ c: train({ backend: 'verl', verl: { gpus: 2 } }), overrides: ['a=1'] });
    expect(verl).toEqual({
      backend: 'verl',
      model: '/m',
      seed: 0,
      kl_coef: 0,
      is_correction: 'none',
      is_cap: 2,
      gpus: 2,
      ray_address: null,
      old_logprobs: 'recompute',
      overrides: ['a=1'],
    });
  });

  it('refuse a run without a model; no LoRA targets are the default; a serving worker has no update', () => {
    const empty = trainingWorkerSettings({ c: train({ lora: { rank: 8, targets: ' , ' } }) });
    expect(empty.backend === 'torch' && empty.training?.lora?.targets).toEqual(['all-linear']);
    expect(() => trainingWorkerSettings({ c: train({ model: undefined }) })).toThrow(
      expect.objectContaining({ exitCode: 2, message: expect.stringMatching(/^no model: pass --model/) }),
    );
    expect(() => trainingWorkerSettings({ c: train({ model: '' }) })).toThrow(/no model/);
    expect(servingSettings('/m', { name: 'teacher' })).toMatchObject({ name: 'teacher', training: null, seed: 0 });
    // What the schema refuses is a usage error naming the setting, never a stack trace.
    expect(() => servingSettings('/m', { threads: 0 })).toThrow(
      expect.objectContaining({ exitCode: 2, message: expect.stringMatching(/^the worker's settings: threads: /) }),
    );
  });
});
