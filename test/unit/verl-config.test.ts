import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { modelParameters, verlPlan } from '../../src/train/verl-config.js';
import { tempDir } from '../helpers/gateway.js';

const train = (t: Record<string, unknown>) => configSchema.parse({ train: { backend: 'verl', ...t } }).train;
const value = (overrides: string[], key: string) =>
  overrides.find((o) => o.startsWith(`${key}=`))?.slice(key.length + 1);

/** A config.json of a Qwen2.5-sized model (hidden, layers, heads as published), no weights. */
function modelDir(shape: {
  hidden: number;
  layers: number;
  ffn: number;
  heads: number;
  kv: number;
  vocab: number;
  tied?: boolean;
}): string {
  const dir = tempDir();
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'config.json'),
    JSON.stringify({
      hidden_size: shape.hidden,
      num_hidden_layers: shape.layers,
      intermediate_size: shape.ffn,
      num_attention_heads: shape.heads,
      num_key_value_heads: shape.kv,
      vocab_size: shape.vocab,
      tie_word_embeddings: shape.tied ?? false,
    }),
  );
  return dir;
}
const qwen7b = { hidden: 3584, layers: 28, ffn: 18944, heads: 28, kv: 4, vocab: 152064 };
const qwen32b = { hidden: 5120, layers: 64, ffn: 27648, heads: 40, kv: 8, vocab: 152064 };

describe('alight settings as verl overrides', () => {
  it('picks the preset by scale: one GPU, one node, several nodes', () => {
    expect(verlPlan(train({ verl: { gpus: 1 } }))).toMatchObject({
      preset: 'one-gpu',
      tensorParallel: 1,
      worldSize: 1,
    });
    expect(verlPlan(train({ verl: { gpus: 8 } }))).toMatchObject({
      preset: 'one-node',
      tensorParallel: 2,
      worldSize: 8,
    });
    expect(verlPlan(train({ verl: { gpus: 8, nodes: 4, rayAddress: 'head:6379' } }))).toMatchObject({
      preset: 'multi-node',
      tensorParallel: 4,
      worldSize: 32,
    });
  });

  it("maps the training settings and alight's loss, and puts the user's overrides last", () => {
    const { overrides } = verlPlan(
      train({
        model: 'Qwen/Qwen2.5-7B-Instruct',
        verl: { gpus: 8, overrides: ['actor_rollout_ref.rollout.gpu_memory_utilization=0.7'] },
        rollouts: { n: 16 },
        batch: { size: 32 },
        optimiser: { lr: 2e-6, klCoef: 0.01, clipHigh: 0.3 },
      }),
    );
    expect([
      value(overrides, 'actor_rollout_ref.model.path'),
      value(overrides, 'actor_rollout_ref.rollout.n'),
      value(overrides, 'data.train_batch_size'),
      value(overrides, 'actor_rollout_ref.actor.optim.lr'),
      value(overrides, 'actor_rollout_ref.actor.use_kl_loss'),
      value(overrides, 'actor_rollout_ref.actor.kl_loss_coef'),
      value(overrides, 'actor_rollout_ref.actor.clip_ratio_high'),
      value(overrides, 'actor_rollout_ref.actor.policy_loss.loss_mode'),
      value(overrides, 'actor_rollout_ref.actor.loss_agg_mode'),
    ]).toEqual(['Qwen/Qwen2.5-7B-Instruct', '16', '32', '0.000002', 'true', '0.01', '0.3', 'alight', 'token-sum']);
    expect(overrides.at(-1)).toBe('actor_rollout_ref.rollout.gpu_memory_utilization=0.7');
  });

  it(
    'refuses a cluster that cannot hold the preset: tensor ' +
      'parallelism that does not divide the GPUs, nodes without Ray',
    () => {
      expect(() => verlPlan(train({ verl: { gpus: 6, tensorParallel: 4 } }))).toThrow(
        /tensor parallel size 4 does not divide --gpus 6/,
      );
      expect(() => verlPlan(train({ verl: { gpus: 8, nodes: 2 } }))).toThrow(
        /--nodes 2 needs a Ray cluster: .*--ray-address/,
      );
    },
  );

  it('checks the model fits: a 7B model on one node, not a 32B model (its actor state) nor a 7B on one GPU', () => {
    expect(modelParameters(modelDir(qwen7b))! / 1e9).toBeCloseTo(7.6, 0);
    expect(verlPlan(train({ model: modelDir(qwen7b), verl: { gpus: 8 } })).preset).toBe('one-node');
    expect(() => verlPlan(train({ model: modelDir(qwen32b), verl: { gpus: 8 } }))).toThrow(
      /~32\.\dB parameters\) does not fit preset one-node on 80 GB GPUs: the actor's state needs ~66 GB a GPU over 8 GPU\(s\)/,
    );
    expect(() => verlPlan(train({ model: modelDir(qwen7b), verl: { gpus: 1 } }))).toThrow(
      /does not fit preset one-gpu/,
    );
    expect(
      verlPlan(train({ model: modelDir(qwen32b), verl: { gpus: 8, nodes: 2, rayAddress: 'h:6379' } })).worldSize,
    ).toBe(16);
  });
  it("maps train.lora onto verl's LoRA keys, with LoRA's learning rate unless one is given", () => {
    const full = verlPlan(train({})).overrides;
    expect(full.filter((o) => o.includes('lora'))).toEqual([]);
    expect(value(full, 'actor_rollout_ref.actor.optim.lr')).toBe('0.00001');
    const adapter = verlPlan(train({ lora: { rank: 16, targets: 'q_proj,v_proj', from: '/ckpt/a' } })).overrides;
    expect(value(adapter, 'actor_rollout_ref.model.lora_rank')).toBe('16');
    expect(value(adapter, 'actor_rollout_ref.model.lora_alpha')).toBe('32');
    expect(value(adapter, 'actor_rollout_ref.model.target_modules')).toBe('[q_proj,v_proj]');
    expect(value(adapter, 'actor_rollout_ref.model.lora_adapter_path')).toBe('/ckpt/a');
    expect(value(adapter, 'actor_rollout_ref.rollout.load_format')).toBe('safetensors');
    expect(value(adapter, 'actor_rollout_ref.actor.optim.lr')).toBe('0.0001');
    // verl's OpenAI endpoints serve an unmerged adapter to no one: merged into the weights at each sync.
    expect(value(adapter, 'actor_rollout_ref.model.lora.merge')).toBe('true');
    const both = verlPlan(train({ lora: { rank: 8, targets: 'all-linear,q_proj' } })).overrides;
    expect(value(both, 'actor_rollout_ref.model.target_modules')).toBe('all-linear');
    const given = verlPlan(train({ lora: { rank: 8 }, optimiser: { lr: 3e-5 } })).overrides;
    expect(value(given, 'actor_rollout_ref.actor.optim.lr')).toBe('0.00003');
    expect(value(given, 'actor_rollout_ref.model.target_modules')).toBe('all-linear');
  });

  it(
    "on the CPU: verl's device, float32 throughout, no sleep mode, a tenth of the RAM for vLLM, no GPU memory " +
      "check, and the environment that selects alight's platform; the user's overrides still last",
    () => {
      const plan = verlPlan(train({ model: modelDir(qwen32b), verl: { gpus: 2, overrides: ['trainer.device=cpu'] } }), {
        cpu: true,
      });
      expect(value(plan.overrides, 'trainer.device')).toBe('cpu');
      expect(value(plan.overrides, 'actor_rollout_ref.actor.fsdp_config.dtype')).toBe('float32');
      expect(value(plan.overrides, '+actor_rollout_ref.ref.fsdp_config.mixed_precision')).toMatch(/param_dtype:fp32/);
      expect(value(plan.overrides, 'actor_rollout_ref.rollout.dtype')).toBe('float32');
      expect(value(plan.overrides, '+actor_rollout_ref.rollout.enable_sleep_mode')).toBe('false');
      expect(value(plan.overrides, 'actor_rollout_ref.rollout.gpu_memory_utilization')).toBe('0.1');
      expect(value(plan.overrides, 'actor_rollout_ref.actor.optim.clip_grad')).toBe('1');
      expect(plan.env).toMatchObject({ VERL_PLATFORM: 'cpu', VERL_USE_EXTERNAL_MODULES: 'alight_worker.verl.cpu' });
      expect(plan.overrides.at(-1)).toBe('trainer.device=cpu');
      expect(verlPlan(train({ verl: { gpus: 2 } })).env).toEqual({});
    },
  );
});
