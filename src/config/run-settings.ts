import { z } from 'zod';
import { AlightError, ExitCode } from '../errors.js';
import type { Store } from '../store/store.js';
import { formatIssues } from './load.js';
import { reward } from './reward.js';
import { configSchema } from './schema.js';

// What a run stored of its settings (store.ensureRun, setRunConfig), read back through the schema that checked them:
// a key the run did not store gets the schema's default, not a reader's own; a key a later alight dropped is left out.
const stored = z.object({
  train: configSchema.shape.train.unwrap().strip().optional(),
  reward: reward.strip().optional(),
  sft: z.object({ data: z.string(), val: z.string().nullish(), epochs: z.number() }).optional(),
});
export type RunSettings = z.infer<typeof stored>;

/** The one reader of a run's stored settings; a run with none (or none stored) reads as {}. */
export function runSettings(store: Store, run: string): RunSettings {
  const parsed = stored.safeParse(JSON.parse(store.getRun(run)?.config ?? 'null') ?? {});
  if (!parsed.success)
    throw new AlightError(`run ${run}'s stored settings do not read:\n${formatIssues(parsed.error)}`, ExitCode.input);
  return parsed.data;
}

/** The train settings a run stored, with the schema's defaults for what it did not (a recorded run: all of them). */
export const runTrainSettings = (store: Store, run: string) =>
  runSettings(store, run).train ?? configSchema.shape.train.unwrap().parse({});
