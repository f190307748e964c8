import { z } from 'zod';
import { AlightError, ExitCode } from '../errors.js';
import type { Store } from '../store/store.js';
import { formatIssues } from './load.js';
import { groupedTrain } from './old-keys.js';
import { type TrainConfig, trainSchema } from './train-schema.js';

// What a run stored of its settings (store.ensureRun, setRunConfig), read back through the schema that checked them:
// a key the run did not store takes the schema's default, not a reader's own. Each reader parses only its part; an
// unknown key directly under train is left out, a value the schema no longer takes is an error naming it. A run stored
// before train's keys were grouped is read with each key in its group.
const parts = {
  train: z.preprocess((raw) => groupedTrain(raw).train, trainSchema.strip()),
  sft: z.object({ data: z.string(), val: z.string().nullish(), epochs: z.number() }),
};

function stored<K extends keyof typeof parts>(
  store: Store,
  run: string,
  key: K,
): z.infer<(typeof parts)[K]> | undefined {
  const raw = (JSON.parse(store.getRun(run)?.config ?? 'null') as Record<string, unknown> | null)?.[key];
  if (raw === undefined) return undefined;
  const parsed = parts[key].safeParse(raw);
  if (!parsed.success)
    throw new AlightError(
      `run ${run}'s stored ${key} settings do not read:\n${formatIssues(parsed.error)}`,
      ExitCode.input,
    );
  return parsed.data as z.infer<(typeof parts)[K]>;
}

/** The train settings a run stored, or undefined for a run that stored none (a recorded one). */
export const storedTrain = (store: Store, run: string): TrainConfig | undefined => stored(store, run, 'train');

/** The train settings a run trained with: the schema's defaults for what it did not store (a recorded run: all). */
export const runTrainSettings = (store: Store, run: string): TrainConfig =>
  storedTrain(store, run) ?? trainSchema.parse({});

/** An `alight sft` run's examples, validation file and epochs; undefined for another run. */
export const storedSft = (store: Store, run: string) => stored(store, run, 'sft');
