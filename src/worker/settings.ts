// The one source of what the Python worker's `init` reads. TS sends it whole, checked here; the worker checks it
// again against python/alight_worker/settings.schema.json, which is this schema written out (npm run worker:schema;
// test/unit/worker-settings.test.ts fails when the two differ). The schema has no defaults: the run's config has
// them (a serving worker's are servingSettings'), and the worker has none of its own.
import { z } from 'zod';
import { AlightError, ExitCode } from '../errors.js';

const count = z.number().int().min(1);
const ratio = z.number().min(0);

/** What both backends' updates read. */
const update = {
  // The penalty towards the initial policy (its k3 estimate); 0: no reference model is loaded.
  kl_coef: ratio,
  is_correction: z.enum(['none', 'token']),
  is_cap: z.number().positive(),
};

/** A low-rank adapter instead of full weights: a fresh one of `rank`, or the saved one in `from` continued. */
const lora = z.strictObject({
  rank: z.number().int().min(0),
  alpha: z.number().positive(),
  dropout: ratio,
  targets: z.array(z.string().min(1)).min(1),
  from: z.string().nullable(),
});

/** The torch backend's update; null for a worker that only serves (alight serve, a distillation teacher). */
const torchTraining = z.strictObject({
  ...update,
  // sft: the next-token loss on the rows' masked tokens, no reference and no importance weights.
  objective: z.enum(['rl', 'sft']),
  lr: z.number().positive(),
  weight_decay: ratio,
  max_grad_norm: z.number().positive(),
  clip_low: ratio,
  clip_high: ratio,
  ppo_epochs: count,
  micro_batch_rows: count,
  lora: lora.nullable(),
});

export const torchWorkerSettings = z.strictObject({
  backend: z.literal('torch'),
  model: z.string().min(1),
  // The model name its server answers to (default: the folder's name).
  name: z.string().min(1).nullable(),
  seed: z.number().int(),
  threads: count.nullable(),
  // The most calls generated in one batch.
  max_batch: count,
  training: torchTraining.nullable(),
});

export const verlWorkerSettings = z.strictObject({
  backend: z.literal('verl'),
  ...update,
  model: z.string().min(1),
  seed: z.number().int(),
  gpus: count,
  ray_address: z.string().nullable(),
  old_logprobs: z.enum(['recompute', 'rollout']),
  // verl's Hydra overrides, composed by src/train/verl-config.ts.
  overrides: z.array(z.string()),
});

export const workerSettings = z.discriminatedUnion('backend', [torchWorkerSettings, verlWorkerSettings]);
export type WorkerSettings = z.infer<typeof workerSettings>;
export type TorchWorkerSettings = z.infer<typeof torchWorkerSettings>;
export type TorchTraining = z.infer<typeof torchTraining>;

/** `value` as the worker's settings, or a usage error naming each setting that cannot be sent (a run's config). */
export function checkedSettings(value: unknown): WorkerSettings {
  const parsed = workerSettings.safeParse(value);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(settings)'}: ${i.message}`);
  throw new AlightError(`the worker's settings: ${problems.join('; ')}`, ExitCode.usage);
}

/** A torch worker that serves `model` and does not train: alight serve's, a distillation teacher's. */
export function servingSettings(model: string, o: { name?: string; seed?: number; threads?: number } = {}) {
  return checkedSettings({
    backend: 'torch',
    model,
    name: o.name ?? null,
    seed: o.seed ?? 0,
    threads: o.threads ?? null,
    max_batch: 64,
    training: null,
  });
}

/** The schema as JSON Schema, as python/alight_worker/settings.schema.json holds it. */
export const workerSettingsJsonSchema = (): unknown => z.toJSONSchema(workerSettings);
