import { existsSync, statSync } from 'node:fs';
import { storedSft } from '../config/run-settings.js';
import { AlightError } from '../errors.js';
import type { Detokenize } from '../samples/diagnose.js';
import type { Store } from '../store/store.js';
import { type Example, readExamples } from '../train/sft.js';
import type { TokenView } from './rows.js';

/** An `alight sft` run's examples, or why the page cannot show them. */
type Read = { file: string; examples: Example[] } | { error: string };

// Read once per file and modification time: a page of 50 examples should not re-read a large file for each.
const cache = new Map<string, { mtimeMs: number; examples: Example[] }>();

/** The curated examples an `alight sft` run trained on (the file its settings name); null for a run that is not one. */
function examplesOf(store: Store, run: string): Read | null {
  const row = store.getRun(run);
  if (row?.mode !== 'sft') return null;
  const file = storedSft(store, run)?.data;
  if (!file || !existsSync(file)) return { error: `the examples file of run ${run} is gone (${file ?? 'none named'})` };
  const { mtimeMs } = statSync(file);
  const hit = cache.get(file);
  if (hit?.mtimeMs === mtimeMs) return { file, examples: hit.examples };
  try {
    const examples = readExamples(file);
    cache.set(file, { mtimeMs, examples });
    return { file, examples };
  } catch (err) {
    if (err instanceof AlightError) return { error: err.message };
    throw err;
  }
}

const lossTokens = (e: Example): number => e.rows.reduce((n, r) => n + r.mask.reduce((a, m) => a + m, 0), 0);

/** A page of an SFT run's examples: each one's rollout (and whether this store holds it), reward and token counts. */
export function examplesPage(store: Store, run: string, offset: number, limit: number) {
  const read = examplesOf(store, run);
  if (read === null || 'error' in read) return read;
  return {
    file: read.file,
    total: read.examples.length,
    offset,
    rows: read.examples.slice(offset, offset + limit).map((e, i) => ({
      index: offset + i,
      rollout: e.rolloutId,
      inStore: store.getRollout(e.rolloutId) !== undefined,
      reward: e.reward,
      rows: e.rows.length,
      tokens: e.rows.reduce((n, r) => n + r.tokens.length, 0),
      lossTokens: lossTokens(e),
    })),
  };
}

/**
 * One example's rows token by token, as the rollout view shows a training row: its loss mask is `sampled` (the tokens
 * the loss is on), with the recorded logprob where there is one (a foreign trace rendered for the student has none).
 */
export function exampleRows(store: Store, run: string, index: number, detokenize: Detokenize | null) {
  const read = examplesOf(store, run);
  if (read === null || 'error' in read) return read;
  const e = read.examples[index];
  if (!e) return { error: `run ${run} has ${read.examples.length} examples, no example ${index}` };
  return {
    index,
    rollout: e.rolloutId,
    inStore: store.getRollout(e.rolloutId) !== undefined,
    reward: e.reward,
    lossTokens: lossTokens(e),
    tokenizer: detokenize !== null,
    rows: e.rows.map((row) => ({
      promptLength: row.promptLength,
      tokens: Array.from(row.tokens, (t, i): TokenView => {
        const sampled = row.mask[i] === 1;
        const logprob = row.logprobs[i];
        return {
          id: t,
          text: detokenize ? detokenize([t]) : null,
          sampled,
          logprob: sampled && Number.isFinite(logprob) ? logprob : null,
          weight: null,
        };
      }),
    })),
  };
}
