import { z } from 'zod';
import { defaultCache } from '../store/idle-cache.js';
import { reward } from './reward.js';
import { trainSchema } from './train-schema.js';

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

export const runnerKinds = ['local', 'pool', 'k8s'] as const;
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
    train: trainSchema.default(trainSchema.parse({})),
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
export type K8sConfig = Config['k8s'];
