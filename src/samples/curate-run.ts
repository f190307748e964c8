import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { AlightError, ExitCode } from '../errors.js';
import type { RolloutSummary, Store } from '../store/store.js';
import { meanLossBatch } from './batch.js';
import { noRedactions, type Redactions } from './conversation.js';
import { type Candidate, type CurateOptions, type Curation, curate, curationTotals } from './curate.js';
import { writeExamplesJsonl, writeExamplesParquet } from './examples-export.js';
import { mergeCalls } from './merge.js';
import { type RenderOptions, renderedCandidates } from './render-run.js';
import { callsOf, ofPurposes } from './run-samples.js';
import { writeSafetensors } from './safetensors.js';

export interface CurateRunOptions extends CurateOptions {
  runs: string[];
  /** The folder for train.safetensors (and val.safetensors, and with `parquet` the same as Parquet). */
  out: string;
  parquet: boolean;
  /** Also the examples' conversations as chat JSONL. */
  jsonl: boolean;
  /** Count, write nothing. */
  dryRun: boolean;
  /** Foreign traces: render them with this student's chat template instead of keeping recorded ids. */
  render?: Omit<RenderOptions, 'log'>;
  log: (line: string) => void;
}

export interface CurateResult {
  runs: string[];
  rollouts: number;
  tasks: Curation['tasks'];
  dropped: Curation['dropped'];
  /** With --render: what never reached training text (reasoning signatures, encrypted reasoning, …). */
  redacted: (Redactions & { stripped: number }) | null;
  train: ReturnType<typeof curationTotals>;
  val: ReturnType<typeof curationTotals>;
  /** The files written (none on a dry run). */
  files: string[];
}

/** `alight samples curate`: the rollouts of recorded runs → supervised examples of the policy's own samples. */
export async function curateRuns(store: Store, o: CurateRunOptions): Promise<CurateResult> {
  const rollouts = o.runs.flatMap((run) => {
    if (!store.getRun(run)) throw new AlightError(`no run ${run} in ${store.path} (alight runs list)`, ExitCode.input);
    return store.rolloutSummaries({ run });
  });
  const redacted = o.render ? { ...noRedactions(), stripped: 0 } : null;
  const candidates =
    o.render && redacted
      ? await renderedCandidates(store, rollouts, { ...o.render, log: o.log }, redacted)
      : rollouts.map((r) => candidateOf(store, r));
  const curation = curate(candidates, o);
  if (curation.train.length === 0)
    throw new AlightError(
      `no example left from ${rollouts.length} rollouts (dropped: ${droppedText(curation.dropped)})`,
      ExitCode.input,
    );
  const files = o.dryRun ? [] : writeCuration(store, curation, o);
  return {
    runs: o.runs,
    rollouts: rollouts.length,
    tasks: curation.tasks,
    dropped: curation.dropped,
    redacted,
    train: curationTotals(curation.train),
    val: curationTotals(curation.val),
    files,
  };
}

export const droppedText = (dropped: Record<string, number>): string =>
  Object.entries(dropped)
    .map(([reason, n]) => `${n} ${reason}`)
    .join(', ');

/** A rollout with its calls merged into rows as `samples build` merges them (a failed one's calls are not read). */
function candidateOf(store: Store, r: RolloutSummary): Candidate {
  const candidate = { rolloutId: r.id, taskId: r.task_id ?? r.id, state: r.state, reward: r.reward };
  if (r.state !== 'succeeded') return { ...candidate, overlong: false, rows: [] };
  const calls = ofPurposes(callsOf(store, r));
  const overlong = calls.some((c) => c.finishReason === 'length');
  return { ...candidate, overlong, rows: mergeCalls(calls, 'trajectory').rows };
}

function writeCuration(store: Store, curation: Curation, o: CurateRunOptions): string[] {
  const files: string[] = [];
  mkdirSync(o.out, { recursive: true });
  for (const [split, examples] of [
    ['train', curation.train],
    ['val', curation.val],
  ] as const) {
    if (examples.length === 0) continue;
    files.push(writeExamples(join(o.out, `${split}.safetensors`), examples, o));
    if (o.parquet) files.push(writeExamplesParquet(join(o.out, `${split}.parquet`), examples));
    if (o.jsonl) {
      const keep = o.render?.keepThinking ?? false;
      const written = writeExamplesJsonl(store, join(o.out, `${split}.jsonl`), examples, keep);
      if (written.skipped)
        o.log(`${written.skipped} examples of ${split} are not conversations: left out of the JSONL`);
      files.push(written.file);
    }
  }
  return files;
}

/**
 * Examples as a batch file (docs/design.md#batch-file) that `samples show` reads and `alight sft` trains on: the
 * recorded tokens, the loss mask on the sampled tokens, advantage 1, each loss token weighted 1/(loss tokens).
 */
export function writeExamples(file: string, examples: readonly Candidate[], o: CurateRunOptions): string {
  const totals = curationTotals(examples);
  const tensors = meanLossBatch(
    examples.map((c) => ({ rolloutId: c.rolloutId, groupId: c.taskId, reward: c.reward, rows: c.rows })),
  );
  const meta = {
    version: 1,
    rollouts: examples.map((c) => ({
      rollout_id: c.rolloutId,
      group_id: c.taskId,
      reward: c.reward,
      rows: c.rows.length,
    })),
    advantage: 'sft',
    loss_norm: 'token-mean',
    pad_token_id: 0,
    metrics: {
      rollouts: totals.examples,
      rows: totals.rows,
      loss_tokens: totals.lossTokens,
      reward_mean: totals.rewardMean,
    },
    curation: { runs: o.runs, select: o.select, max_per_task: o.maxPerTask ?? null, min_reward: o.minReward ?? null },
  };
  writeSafetensors(file, tensors, { alight: JSON.stringify(meta) });
  return file;
}
