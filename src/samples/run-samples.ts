import type { MergeLevel } from '../config/train-schema.js';
import { AlightError, ExitCode } from '../errors.js';
import type { CallPurpose } from '../store/calls.js';
import type { RolloutSummary, Store } from '../store/store.js';
import { type Batch, type BatchOptions, type BatchTensors, buildBatch, type RolloutRows } from './batch.js';
import { type BreakKind, summariseBreaks } from './diagnose.js';
import { type Explain, type MergeBreak, mergeCalls } from './merge.js';
import { writeSafetensors } from './safetensors.js';

export interface MergeCounts {
  breaks: number;
  skipped_error_calls: number;
  skipped_calls_without_tokens: number;
  /** Calls of purposes rows are not built from (a harness's side calls, unless `train.batch.purposes` names them). */
  side_calls: number;
  rollouts_without_rows: number;
}

interface MergedRun {
  rollouts: RolloutRows[];
  counts: MergeCounts;
  breaks: (MergeBreak & { rollout_id: string })[];
}

/** The succeeded rollouts of a run, merged into rows. */
function mergeRun(store: Store, run: string, rules: MergeRules, explain?: Explain): MergedRun {
  if (!store.getRun(run)) throw new AlightError(`no run ${run} in ${store.path} (alight runs list)`, ExitCode.input);
  const finished = store.rolloutSummaries({ run }).filter((r) => r.state === 'succeeded');
  if (finished.length === 0)
    throw new AlightError(`run ${run} has no succeeded rollouts: nothing to train on`, ExitCode.input);
  return mergeRollouts(store, finished, rules, explain);
}

function mergeRollouts(store: Store, finished: RolloutSummary[], rules: MergeRules, explain?: Explain): MergedRun {
  const merged: MergedRun = {
    rollouts: [],
    breaks: [],
    counts: {
      breaks: 0,
      skipped_error_calls: 0,
      skipped_calls_without_tokens: 0,
      side_calls: 0,
      rollouts_without_rows: 0,
    },
  };
  for (const r of finished) {
    const all = callsOf(store, r);
    const calls = ofPurposes(all, rules.purposes);
    merged.counts.side_calls += all.length - calls.length;
    const m = mergeCalls(calls, rules.level, explain);
    merged.counts.breaks += m.breaks.length;
    merged.counts.skipped_error_calls += m.skipped.errors;
    merged.counts.skipped_calls_without_tokens += m.skipped.withoutTokens;
    merged.breaks.push(...m.breaks.map((b) => ({ ...b, rollout_id: r.id })));
    if (m.rows.length === 0) merged.counts.rollouts_without_rows++;
    else {
      const overlong = calls.some((c) => c.finishReason === 'length');
      merged.rollouts.push({ rolloutId: r.id, groupId: r.group_id, reward: r.reward, rows: m.rows, overlong });
    }
  }
  return merged;
}

export function callsOf(store: Store, rollout: RolloutSummary) {
  try {
    return store.calls.tokenCalls(rollout.id);
  } catch (err) {
    throw new AlightError(`cannot read the calls of rollout ${rollout.id}: ${(err as Error).message}`, ExitCode.input);
  }
}

/** Which calls make rows, and how they merge. */
export interface MergeRules {
  level: MergeLevel;
  /** Default: the agent's own turns (`main`). */
  purposes?: readonly CallPurpose[];
}

export interface BuildOptions extends BatchOptions, MergeRules {
  run: string;
  out: string;
}

/** The calls of the given purposes (default: the agent's own turns). */
export function ofPurposes<T extends { purpose: CallPurpose }>(
  calls: T[],
  purposes: readonly CallPurpose[] = ['main'],
) {
  return calls.filter((c) => purposes.includes(c.purpose));
}

export interface BuildResult {
  /**
   * null: a training step left with nothing to learn, every group flat (dropZeroVariance) or every reply cut
   * (dropOverlong).
   */
  out: string | null;
  /** Milliseconds spent loading and merging the calls, building the batch, writing the file. */
  timings: { merge_ms: number; batch_ms: number; write_ms: number };
  metrics: Batch['meta']['metrics'];
  merge: MergeCounts;
}

/** `alight samples build`: a run's finished rollouts → rows → one batch file. Refuses to write an empty batch. */
export function buildRunBatch(store: Store, options: BuildOptions): BuildResult {
  const started = performance.now();
  const a = assemble(mergeRun(store, options.run, options), options, `run ${options.run}`, started, false);
  return 'skipped' in a ? a.skipped : write(a, options.out);
}

/**
 * A training step's batch: its succeeded rollouts (the others are left out, as the caller counted them). `adjust`
 * (on-policy distillation) may change its tensors before they are written.
 */
export async function buildStepBatch(
  store: Store,
  finished: RolloutSummary[],
  options: Omit<BuildOptions, 'run'>,
  label: string,
  adjust?: (tensors: BatchTensors) => Promise<void>,
): Promise<BuildResult> {
  const started = performance.now();
  const a = assemble(mergeRollouts(store, finished, options), options, label, started, true);
  if ('skipped' in a) return a.skipped;
  await adjust?.(a.batch.tensors);
  return write(a, options.out);
}

interface Assembled {
  batch: Batch;
  counts: MergeCounts;
  at: { started: number; merged: number; built: number };
}

function assemble(
  { rollouts, counts }: MergedRun,
  options: Omit<BuildOptions, 'run'>,
  label: string,
  started: number,
  step: boolean,
): Assembled | { skipped: BuildResult } {
  const merged = performance.now();
  if (rollouts.length === 0) {
    throw new AlightError(
      `no rollout of ${label} has calls with token ids ` +
        `(${counts.skipped_calls_without_tokens} calls without ` +
        'them: record against a vllm-kind upstream or alight serve)',
      ExitCode.input,
    );
  }
  const batch = buildBatch(rollouts, options);
  const m = batch.meta.metrics;
  // A step of groups that all scored alike (or of replies all cut) carries no signal, which is a result, not an error:
  // the step is counted and its update skipped (an export, `alight samples build`, still refuses to write an empty file).
  if (m.loss_tokens === 0 && step && m.dropped_zero_variance + m.dropped_overlong > 0) {
    const timings = { merge_ms: merged - started, batch_ms: 0, write_ms: 0 };
    return { skipped: { out: null, timings, metrics: m, merge: counts } };
  }
  if (m.loss_tokens === 0)
    throw new AlightError(`the batch of ${label} would have no loss tokens; nothing written`, ExitCode.input);
  return { batch, counts, at: { started, merged, built: performance.now() } };
}

function write({ batch, counts, at }: Assembled, out: string): BuildResult {
  const writing = performance.now();
  writeSafetensors(out, batch.tensors, { alight: JSON.stringify(batch.meta) });
  const timings = {
    merge_ms: at.merged - at.started,
    batch_ms: at.built - at.merged,
    write_ms: performance.now() - writing,
  };
  return { out, timings, metrics: batch.meta.metrics, merge: counts };
}

export interface DiagnoseResult {
  run: string;
  rollouts: number;
  merge: MergeCounts;
  kinds: Record<BreakKind, number>;
  breaks: (MergeBreak & { rollout_id: string })[];
}

/** `alight samples diagnose`: every merge break of a run, classified. */
export function diagnoseRun(store: Store, run: string, explain: Explain): DiagnoseResult {
  const { rollouts, counts, breaks } = mergeRun(store, run, { level: 'trajectory' }, explain);
  return {
    run,
    rollouts: rollouts.length,
    merge: counts,
    kinds: summariseBreaks(breaks.map((b) => b.diagnosis!.kind)),
    breaks,
  };
}
