import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { learningRate, type TrainConfig, trainsLora } from '../config/train-schema.js';
import { AlightError, ExitCode } from '../errors.js';
import { probe } from '../process/launch.js';
import { PYTHON_DIR } from '../setup/python-env.js';
import { gpuMemoryGb, hasFlashAttention } from '../setup/verl-env.js';
import { vllmDevice } from '../setup/vllm-env.js';
import { cpuServingMemory, rlCpuOverrides, verlCpuEnv } from './verl-cpu.js';

/**
 * Presets for the verl backend by scale: vLLM's tensor parallel size and memory share, and the per-GPU micro-batches
 * of the actor's update and log-prob passes. One GPU: a small model (≤ 3B) colocated; one node of up to 8 GPUs: up to
 * ~14B; several nodes: larger models, more tensor parallelism.
 */
export const verlPresets = {
  'one-gpu': { tensorParallel: 1, gpuMemoryUtilization: 0.4, microBatch: 2, logprobMicroBatch: 4 },
  'one-node': { tensorParallel: 2, gpuMemoryUtilization: 0.5, microBatch: 4, logprobMicroBatch: 8 },
  'multi-node': { tensorParallel: 4, gpuMemoryUtilization: 0.5, microBatch: 2, logprobMicroBatch: 4 },
} as const;
export type VerlPreset = keyof typeof verlPresets;

export function presetFor(gpus: number, nodes: number): VerlPreset {
  return nodes > 1 ? 'multi-node' : gpus === 1 ? 'one-gpu' : 'one-node';
}

/** The model's size from its config.json (a local folder), for the memory check; null when it cannot be read. */
export function modelParameters(model: string): number | null {
  const file = join(model, 'config.json');
  if (!existsSync(file)) return null;
  const c = JSON.parse(readFileSync(file, 'utf8')) as Record<string, number | boolean | undefined>;
  const h = Number(c.hidden_size),
    layers = Number(c.num_hidden_layers),
    vocab = Number(c.vocab_size);
  const ffn = Number(c.intermediate_size ?? 4 * h);
  if (!h || !layers || !vocab) return null;
  const kvShare =
    c.num_key_value_heads && c.num_attention_heads ? Number(c.num_key_value_heads) / Number(c.num_attention_heads) : 1;
  const perLayer = h * h * (2 + 2 * kvShare) + 3 * h * ffn;
  return layers * perLayer + vocab * h * (c.tie_word_embeddings ? 1 : 2);
}

/** Where verl runs: its GPUs' memory, whether flash-attn is installed, or the CPU (alight's platform, verl-cpu.ts). */
export interface VerlHost {
  gpuMemoryGb?: number;
  flashAttention?: boolean;
  cpu?: boolean;
}

/**
 * Where this run's verl runs: on the CPU where `--device cpu` says so or no CUDA GPU is here (a Ray cluster of GPU
 * machines driven from a CPU-only one takes `--device cuda`). `python`: the verl virtualenv's, when made.
 */
export function verlHost(c: TrainConfig, python: string | null): VerlHost {
  const cpu = vllmDevice(c.vllm.device) === 'cpu';
  return { cpu, gpuMemoryGb: cpu ? undefined : gpuMemoryGb(), flashAttention: !python || hasFlashAttention(python) };
}

export interface VerlPlan {
  preset: VerlPreset;
  tensorParallel: number;
  worldSize: number;
  overrides: string[];
  /** What verl's processes need in their environment (the CPU platform's selection; nothing on GPUs). */
  env: Record<string, string>;
}

/**
 * alight's train config as overrides of verl's Hydra trainer config (ppo_trainer.yaml): the model, the cluster, the
 * preset's parallelism and batch sizes, the optimiser and clip settings, alight's loss (`alight`, summed with the
 * batch's weights) and no verl-side advantage estimation or reward. Refuses a cluster too small for the preset or the
 * model (FSDP keeps ~16 bytes a parameter sharded over every GPU; vLLM 2 bytes a parameter over its tensor-parallel
 * group), before anything starts. `train.verl.overrides` come last.
 */
export function verlPlan(c: TrainConfig, host: VerlHost = {}): VerlPlan {
  const { gpuMemoryGb = 80, flashAttention = true, cpu = false } = host;
  const preset = presetFor(c.verl.gpus, c.verl.nodes);
  const p = verlPresets[preset];
  const tensorParallel = c.verl.tensorParallel ?? Math.min(p.tensorParallel, c.verl.gpus);
  const worldSize = c.verl.gpus * c.verl.nodes;
  checkCluster(c.verl, tensorParallel);
  const util = c.vllm.gpuMemoryUtilization ?? (cpu ? cpuServingMemory : p.gpuMemoryUtilization);
  // The RAM is the CPU's limit, and the machine's to manage: no GPU arithmetic there.
  const params = c.model && !cpu ? modelParameters(c.model) : null;
  const problem = params === null ? null : memoryProblem(params, { worldSize, tensorParallel, util, gpuMemoryGb });
  if (problem) {
    throw new AlightError(
      `the model (~${(params! / 1e9).toFixed(1)}B parameters) does not fit ` +
        `preset ${preset} on ${gpuMemoryGb} GB GPUs: ${problem}; add GPUs ` +
        '(--gpus, --nodes), raise --tensor-parallel, or offload ' +
        '(--verl actor_rollout_ref.actor.fsdp_config.param_offload=true)',
      ExitCode.usage,
    );
  }
  const overrides = overridesFor(c, p, { tensorParallel, util, flashAttention: flashAttention && !cpu, cpu });
  return { preset, tensorParallel, worldSize, overrides, env: cpu ? verlCpuEnv : {} };
}

/** Refuses several nodes without a Ray cluster, and a tensor-parallel size that does not divide a node's GPUs. */
function checkCluster(verl: TrainConfig['verl'], tensorParallel: number): void {
  if (verl.nodes > 1 && !verl.rayAddress) {
    throw new AlightError(
      `--nodes ${verl.nodes} needs a Ray cluster: run \`ray start --head\` on the first node and ` +
        `\`ray start --address <head>:6379\` on the others, then pass --ray-address <head>:6379`,
      ExitCode.usage,
    );
  }
  if (verl.gpus % tensorParallel !== 0) {
    throw new AlightError(
      `tensor parallel size ${tensorParallel} does not divide --gpus ${verl.gpus} (vLLM's groups must fill a node's GPUs)`,
      ExitCode.usage,
    );
  }
}

/**
 * Why a model of `params` parameters does not fit the GPUs, or null. The actor's sharded state stays on the GPUs beside
 * vLLM's share; vLLM's weights must leave room for a KV cache.
 */
function memoryProblem(
  params: number,
  g: { worldSize: number; tensorParallel: number; util: number; gpuMemoryGb: number },
): string | null {
  const actorGb = (16 * params) / g.worldSize / 1e9;
  const servingGb = (2 * params) / g.tensorParallel / 1e9;
  if (actorGb > (0.95 - g.util) * g.gpuMemoryGb)
    return (
      `the actor's state needs ~${actorGb.toFixed(0)} GB a GPU over ${g.worldSize} GPU(s), ` +
      `more than the ~${((0.95 - g.util) * g.gpuMemoryGb).toFixed(0)} GB vLLM leaves`
    );
  if (servingGb > 0.8 * g.util * g.gpuMemoryGb)
    return (
      `vLLM's weights need ~${servingGb.toFixed(0)} GB a GPU at tensor parallel ` +
      `${g.tensorParallel}, most of its ~${(g.util * g.gpuMemoryGb).toFixed(0)} GB share`
    );
  return null;
}

/** The Hydra overrides, `train.verl.overrides` last. */
function overridesFor(
  c: TrainConfig,
  p: (typeof verlPresets)[VerlPreset],
  o: { tensorParallel: number; util: number; flashAttention: boolean; cpu: boolean },
): string[] {
  const { tensorParallel, util, flashAttention, cpu } = o;
  const micro = p.microBatch;
  const tokenBudget = (c.batch.maxPromptTokens ?? 8192) + c.batch.maxResponseTokens;
  return [
    `actor_rollout_ref.model.path=${c.model}`,
    // verl's model config asks for flash-attn's attention, and its padding removal patches flash-attn in: without it
    // installed (verl's own install does not bring it), transformers' SDPA and padded rows.
    ...(flashAttention
      ? ['actor_rollout_ref.model.use_remove_padding=true']
      : [
          'actor_rollout_ref.model.use_remove_padding=false',
          '+actor_rollout_ref.model.override_config.attn_implementation=sdpa',
        ]),
    `trainer.n_gpus_per_node=${c.verl.gpus}`,
    `trainer.nnodes=${c.verl.nodes}`,
    `trainer.device=${cpu ? 'cpu' : 'cuda'}`,
    // verl's own agent and reward loops (8 Ray workers each by default) stay idle: alight's harnesses and rewards
    // replace them. One of each, as verl builds them regardless.
    'actor_rollout_ref.rollout.agent.num_workers=1',
    'reward.num_workers=1',
    'trainer.logger=[console]',
    'trainer.use_v1=false',
    `data.train_batch_size=${c.batch.size}`,
    `data.max_prompt_length=${c.batch.maxPromptTokens ?? 8192}`,
    `data.max_response_length=${c.batch.maxResponseTokens}`,
    'actor_rollout_ref.rollout.name=vllm',
    'actor_rollout_ref.rollout.mode=async',
    `actor_rollout_ref.rollout.n=${c.rollouts.n}`,
    // Harnesses send chat messages: the servers need their tokenizer and chat template.
    'actor_rollout_ref.rollout.skip_tokenizer_init=false',
    'actor_rollout_ref.rollout.calculate_log_probs=true',
    `actor_rollout_ref.rollout.tensor_model_parallel_size=${tensorParallel}`,
    `actor_rollout_ref.rollout.gpu_memory_utilization=${util}`,
    'actor_rollout_ref.rollout.free_cache_engine=true',
    `actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=${p.logprobMicroBatch}`,
    `actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=${p.logprobMicroBatch}`,
    `actor_rollout_ref.actor.ppo_mini_batch_size=${c.batch.size}`,
    `actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=${micro}`,
    // Rows per GPU vary step to step (drops, multi-row rollouts): micro-batches by tokens, not by a fixed row count
    // that would have to divide them. The budget holds at least one longest row.
    'actor_rollout_ref.actor.use_dynamic_bsz=true',
    `actor_rollout_ref.actor.ppo_max_token_len_per_gpu=${Math.max(16384, tokenBudget)}`,
    // Checkpoints carry a Hugging Face model folder too (<checkpoint>/huggingface), for vLLM or eval to load.
    'actor_rollout_ref.actor.checkpoint.save_contents=[model,optimizer,extra,hf_model]',
    `actor_rollout_ref.actor.ppo_epochs=${c.optimiser.ppoEpochs}`,
    `actor_rollout_ref.actor.optim.lr=${learningRate(c)}`,
    `actor_rollout_ref.actor.optim.weight_decay=${c.optimiser.weightDecay}`,
    // The engine's optimiser clips by optim.clip_grad; actor.grad_clip is the legacy workers' key, not read here.
    `actor_rollout_ref.actor.optim.clip_grad=${c.optimiser.maxGradNorm}`,
    `actor_rollout_ref.actor.clip_ratio_low=${c.optimiser.clipLow}`,
    `actor_rollout_ref.actor.clip_ratio_high=${c.optimiser.clipHigh}`,
    'actor_rollout_ref.actor.policy_loss.loss_mode=alight',
    'actor_rollout_ref.actor.loss_agg_mode=token-sum',
    'actor_rollout_ref.actor.entropy_coeff=0',
    `actor_rollout_ref.actor.use_kl_loss=${c.optimiser.klCoef > 0}`,
    `actor_rollout_ref.actor.kl_loss_coef=${c.optimiser.klCoef}`,
    `actor_rollout_ref.actor.data_loader_seed=${c.seed}`,
    // Advantages and rewards are alight's; `grpo` only keeps verl from building a critic.
    'algorithm.adv_estimator=grpo',
    'algorithm.use_kl_in_reward=false',
    'algorithm.rollout_correction.rollout_is=null',
    ...loraOverrides(c),
    ...(cpu ? rlCpuOverrides() : []),
    ...c.verl.overrides,
  ];
}

/**
 * verl's own LoRA settings (docs/advance/ppo_lora.rst): the adapter on the FSDP actor, merged into the base weights for
 * each sync (`lora.merge`). verl's vLLM servers apply an unmerged adapter only to requests made through verl's own
 * generate call: the OpenAI endpoints the harnesses call would serve the base model without it (the served-policy check
 * catches that as "not synced", on the CPU as on GPUs).
 */
function loraOverrides(c: TrainConfig): string[] {
  const { lora } = c;
  if (!trainsLora(c)) return [];
  // PEFT expands `all-linear` only alone: beside other names (an output layer is refused on verl) it already holds them.
  const targets = lora.targets.split(',').includes('all-linear') ? 'all-linear' : `[${lora.targets}]`;
  return [
    `actor_rollout_ref.model.lora_rank=${lora.rank}`,
    `actor_rollout_ref.model.lora_alpha=${lora.alpha}`,
    `actor_rollout_ref.model.target_modules=${targets}`,
    'actor_rollout_ref.model.lora.merge=true',
    'actor_rollout_ref.rollout.load_format=safetensors',
    ...(lora.from ? [`actor_rollout_ref.model.lora_adapter_path=${lora.from}`] : []),
  ];
}

/**
 * verl's own Hydra config (`ppo_trainer`, or `sft_trainer_engine`) composed with `overrides` by the verl virtualenv's
 * python, as YAML; a key verl does not have is refused with verl's words.
 */
export function composedVerlConfig(python: string, config: string, overrides: string[]): string {
  const res = probe(python, ['-m', 'alight_worker.verl.config', '--config', config, ...overrides], { cwd: PYTHON_DIR });
  if (res.exitCode !== 0)
    throw new AlightError(
      `verl refused the config:\n${(res.startError ?? res.stderr).trim().split('\n').slice(-6).join('\n')}`,
      ExitCode.usage,
    );
  return res.stdout;
}
