/**
 * verl on a machine without CUDA: the same trainers and workers as on GPUs, through alight's platform plugin
 * (python/alight_worker/verl/cpu.py), which verl loads at import where these variables say so. Only settings differ:
 * float32 throughout (verl computes in bf16 by default), FSDP2 on gloo, nothing compiled, and vLLM's CPU build without
 * sleep mode (it has none: verl's sleep and wake become a pause). Slow; for checking a set-up, and how the suite runs
 * verl's own code here.
 */

/** The environment that selects alight's CPU platform in verl's processes (alight_worker/verl/cpu.py). */
export const verlCpuEnv = {
  VERL_USE_EXTERNAL_MODULES: 'alight_worker.verl.cpu',
  VERL_PLATFORM: 'cpu',
  VERL_ENGINE_DEVICE: 'cuda',
  VERL_ENGINE_VENDOR: 'nvidia',
};

const fp32 = '{param_dtype:fp32,reduce_dtype:fp32,buffer_dtype:fp32}';

/** verl's SFT trainer on the CPU. */
export const sftCpuOverrides = [
  'trainer.device=cpu',
  'engine.strategy=fsdp2',
  'engine.use_torch_compile=false',
  'engine.dtype=float32',
  '+engine.mixed_precision.param_dtype=fp32',
  '+engine.mixed_precision.reduce_dtype=fp32',
  '+engine.mixed_precision.buffer_dtype=fp32',
];

/**
 * verl's RL workers on the CPU (`trainer.device=cpu` beside them): the actor and reference in float32 (the
 * served-policy check compares them with the servers to fp32 rounding), vLLM's CPU build eager, in float32, without
 * sleep mode.
 */
export function rlCpuOverrides(): string[] {
  return [
    'actor_rollout_ref.actor.strategy=fsdp2',
    ...['actor', 'ref'].flatMap((role) => [
      `actor_rollout_ref.${role}.fsdp_config.dtype=float32`,
      `actor_rollout_ref.${role}.fsdp_config.use_torch_compile=false`,
      `+actor_rollout_ref.${role}.fsdp_config.mixed_precision=${fp32}`,
    ]),
    'actor_rollout_ref.rollout.dtype=float32',
    'actor_rollout_ref.rollout.enforce_eager=true',
    '+actor_rollout_ref.rollout.enable_sleep_mode=false',
  ];
}

/** On the CPU, vLLM's "GPU memory" is a share of the RAM: a tenth unless told (its KV cache for a small model). */
export const cpuServingMemory = 0.1;
