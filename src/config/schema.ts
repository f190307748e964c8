import { z } from 'zod';

export const upstreamKinds = ['vllm', 'openai-compatible'] as const;
export type UpstreamKind = (typeof upstreamKinds)[number];

const upstream = z.object({
  url: z.string().url().optional().describe('OpenAI-compatible base URL ending in /v1, e.g. http://127.0.0.1:8000/v1'),
  kind: z.enum(upstreamKinds).default('vllm')
    .describe('vllm: ask for token ids and logprobs; openai-compatible: pass through, token fields null'),
  model: z.string().optional().describe('model name sent upstream; default: the first model the upstream lists'),
  apiKeyEnv: z.string().optional().describe('name of the env var holding the upstream API key (never stored)'),
  timeoutS: z.number().positive().default(600).describe('seconds to wait for the upstream headers, and between stream chunks'),
  retries: z.number().int().min(0).default(3).describe('retries of 429/5xx/connect errors/timeouts before the first byte reached the harness'),
}).strict();

const gateway = z.object({
  host: z.string().default('127.0.0.1').describe('bind address; keep loopback unless harnesses run on other hosts'),
  port: z.number().int().min(0).max(65535).default(0).describe('0 picks a free port'),
  bodyLimitMb: z.number().positive().default(64).describe('largest request body accepted (413 above it)'),
}).strict();

const record = z.object({
  n: z.number().int().positive().default(1).describe('rollouts per task'),
  concurrency: z.number().int().positive().default(4).describe('harness processes at once'),
  timeoutS: z.number().positive().default(3600).describe('seconds before a harness is killed and its rollout failed (with --tasks)'),
  rewardCmd: z.string().optional().describe('shell command run after the harness; the last number it prints is the reward'),
}).strict();

/** `alight.config.yaml`: every setting, its default and what it does. Flags override it. */
export const configSchema = z.object({
  db: z.string().default('.alight/alight.db').describe('SQLite trace store (ALIGHT_DB or --db override)'),
  upstream: upstream.default(upstream.parse({})),
  gateway: gateway.default(gateway.parse({})),
  record: record.default(record.parse({})),
  tokenizer: z.string().optional()
    .describe('the policy model\'s tokenizer, for decoded text in samples diagnose/show: a tokenizer.json, a model folder holding one, or a GGUF model'),
}).strict();

export type Config = z.infer<typeof configSchema>;
export type UpstreamConfig = Config['upstream'];
export type GatewayConfig = Config['gateway'];
