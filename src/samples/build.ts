import { AlightError, ExitCode } from '../errors.js';
import type { Store } from '../store/store.js';
import { buildBatch, type Batch, type BatchOptions, type RolloutRows } from './batch.js';
import { mergeCalls, type MergeBreak, type MergeLevel } from './merge.js';
import { writeSafetensors } from './safetensors.js';

export interface BuildOptions extends BatchOptions {
  run: string;
  level: MergeLevel;
  out: string;
}

export interface BuildResult {
  out: string;
  metrics: Batch['meta']['metrics'];
  merge: { breaks: number; skipped_error_calls: number; skipped_calls_without_tokens: number; rollouts_without_rows: number };
  breaks: (MergeBreak & { rollout_id: string })[];
}

/** `alight samples build`: a run's finished rollouts → rows → one batch file. Refuses to write an empty batch. */
export function buildRunBatch(store: Store, options: BuildOptions): BuildResult {
  if (!store.getRun(options.run)) throw new AlightError(`no run ${options.run} in ${store.path} (alight runs list)`, ExitCode.input);
  const finished = store.rolloutSummaries({ run: options.run }).filter((r) => r.state === 'succeeded');
  if (finished.length === 0) throw new AlightError(`run ${options.run} has no succeeded rollouts: nothing to train on`, ExitCode.input);

  const rollouts: RolloutRows[] = [];
  const breaks: BuildResult['breaks'] = [];
  const merge = { breaks: 0, skipped_error_calls: 0, skipped_calls_without_tokens: 0, rollouts_without_rows: 0 };
  for (const r of finished) {
    let calls;
    try {
      calls = store.calls.list(r.id);
    } catch (err) {
      throw new AlightError(`cannot read the calls of rollout ${r.id}: ${(err as Error).message}`, ExitCode.input);
    }
    const merged = mergeCalls(calls, options.level);
    merge.breaks += merged.breaks.length;
    merge.skipped_error_calls += merged.skipped.errors;
    merge.skipped_calls_without_tokens += merged.skipped.withoutTokens;
    breaks.push(...merged.breaks.map((b) => ({ ...b, rollout_id: r.id })));
    if (merged.rows.length === 0) { merge.rollouts_without_rows++; continue; }
    rollouts.push({ rolloutId: r.id, groupId: r.group_id, reward: r.reward, rows: merged.rows });
  }
  if (rollouts.length === 0) {
    throw new AlightError(`no rollout of run ${options.run} has calls with token ids ` +
      `(${merge.skipped_calls_without_tokens} calls without them: record against a vllm-kind upstream or alight serve)`, ExitCode.input);
  }
  const batch = buildBatch(rollouts, options);
  if (batch.meta.metrics.loss_tokens === 0) throw new AlightError(`the batch of run ${options.run} would have no loss tokens; nothing written`, ExitCode.input);
  writeSafetensors(options.out, batch.tensors, { alight: JSON.stringify(batch.meta) });
  return { out: options.out, metrics: batch.meta.metrics, merge, breaks };
}
