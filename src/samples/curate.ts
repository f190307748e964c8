import { createHash } from 'node:crypto';
import { permutation } from '../algo/schedule.js';
import { mean } from '../algo/stats.js';
import type { Row } from './merge.js';
import type { TaskFilter, TaskStats } from './task-filter.js';

/**
 * `samples curate` (pure): from recorded rollouts to supervised examples — the tasks a filter keeps, in each the
 * rollouts that may be learned from, deduplicated, the chosen few, and a validation split by task (so that no task
 * is in both). The policy's own rollouts keep their recorded token ids and loss masks, exactly as `samples build`
 * merges them.
 */
export interface Candidate {
  rolloutId: string;
  /** The task the rollout ran (its own id when it ran none: a task of one). */
  taskId: string;
  state: string;
  reward: number | null;
  /** A call was cut at its max_tokens. */
  overlong: boolean;
  rows: Row[];
  /** Why a foreign rollout could not be rendered with the student's template (`--render`). */
  unrenderable?: string;
}

export const selections = ['best', 'best-n', 'shortest', 'all'] as const;
export type Selection = (typeof selections)[number];

export interface CurateOptions {
  filter?: TaskFilter;
  select: Selection;
  /** `best-n`'s n; `all`'s cap (none: every one). */
  maxPerTask?: number;
  minReward?: number;
  /** The reward at which a rollout counts as solving its task (the filter's `solved`, `rate`, `pass@k`). */
  solvedAt: number;
  keepTruncated: boolean;
  /** Tasks held out for validation, a seeded sample of those with an example. */
  valTasks: number;
  seed: number;
}

export const dropReasons = [
  'failed',
  'no-reward',
  'task-filter',
  'truncated',
  'unrenderable',
  'no-tokens',
  'min-reward',
  'duplicate',
  'not-selected',
] as const;
export type DropReason = (typeof dropReasons)[number];

export interface Curation {
  train: Candidate[];
  val: Candidate[];
  tasks: { seen: number; kept: number; train: number; val: number };
  dropped: Record<DropReason, number>;
}

export function curate(candidates: readonly Candidate[], o: CurateOptions): Curation {
  const dropped = Object.fromEntries(dropReasons.map((r) => [r, 0])) as Record<DropReason, number>;
  const byTask = new Map<string, Candidate[]>();
  for (const c of candidates) byTask.set(c.taskId, [...(byTask.get(c.taskId) ?? []), c]);
  const chosen: Candidate[][] = [];
  for (const rollouts of byTask.values()) {
    const picked = curateTask(rollouts, o, dropped);
    if (picked.length) chosen.push(picked);
  }
  const val = new Set(permutation(chosen.length, o.seed).slice(0, Math.min(o.valTasks, chosen.length)));
  return {
    train: chosen.filter((_, i) => !val.has(i)).flat(),
    val: chosen.filter((_, i) => val.has(i)).flat(),
    tasks: { seen: byTask.size, kept: chosen.length, train: chosen.length - val.size, val: val.size },
    dropped,
  };
}

/** One task's examples; what it leaves out counted by reason, each rollout under the first reason that applies. */
function curateTask(rollouts: Candidate[], o: CurateOptions, dropped: Record<DropReason, number>): Candidate[] {
  const leave = (reason: DropReason, out: Candidate[]) => {
    dropped[reason] += out.length;
  };
  // One pass: the dedupe predicate remembers what it has seen.
  const split = (list: Candidate[], keep: (c: Candidate) => boolean, reason: DropReason) => {
    const kept = list.filter(keep);
    dropped[reason] += list.length - kept.length;
    return kept;
  };
  const finished = split(rollouts, (c) => c.state === 'succeeded', 'failed');
  const scored = split(finished, (c) => c.reward !== null, 'no-reward');
  if (o.filter && !o.filter(taskStats(scored, o.solvedAt))) {
    leave('task-filter', scored);
    return [];
  }
  let eligible = split(scored, (c) => o.keepTruncated || !c.overlong, 'truncated');
  eligible = split(eligible, (c) => c.unrenderable === undefined, 'unrenderable');
  eligible = split(eligible, (c) => c.rows.length > 0, 'no-tokens');
  eligible = split(eligible, (c) => o.minReward === undefined || (c.reward as number) >= o.minReward, 'min-reward');
  eligible = split(eligible, firstOfItsContent(), 'duplicate');
  const picked = select(eligible, o);
  leave(
    'not-selected',
    eligible.filter((c) => !picked.includes(c)),
  );
  return picked;
}

export function taskStats(scored: readonly Candidate[], solvedAt: number): TaskStats {
  const rewards = scored.map((c) => c.reward as number);
  return {
    n: rewards.length,
    avg: mean(rewards) ?? Number.NaN,
    min: rewards.length ? Math.min(...rewards) : Number.NaN,
    max: rewards.length ? Math.max(...rewards) : Number.NaN,
    solved: rewards.filter((r) => r >= solvedAt).length,
  };
}

const lossTokens = (c: Candidate): number => c.rows.reduce((a, r) => a + r.mask.reduce((s, m) => s + m, 0), 0);

/** Higher reward first, then fewer sampled tokens, then the rollout id: the same order on every run. */
const byReward = (a: Candidate, b: Candidate): number =>
  (b.reward as number) - (a.reward as number) ||
  lossTokens(a) - lossTokens(b) ||
  a.rolloutId.localeCompare(b.rolloutId);

function select(eligible: Candidate[], o: CurateOptions): Candidate[] {
  const ranked = [...eligible].sort(byReward);
  switch (o.select) {
    case 'best':
      return ranked.slice(0, 1);
    case 'best-n':
      return ranked.slice(0, o.maxPerTask ?? 1);
    case 'shortest':
      return [...eligible].sort((a, b) => lossTokens(a) - lossTokens(b) || byReward(a, b)).slice(0, o.maxPerTask ?? 1);
    case 'all':
      return ranked.slice(0, o.maxPerTask ?? ranked.length);
  }
}

/** A predicate true for the first rollout of each content, false for the later ones. */
function firstOfItsContent(): (c: Candidate) => boolean {
  const seen = new Set<string>();
  return (c) => {
    const key = contentKey(c);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  };
}

/**
 * Two rollouts are duplicates when every row has the same tokens and the same loss mask: the token ids hold the
 * whole conversation, tool calls and their results included, so two that differ only in a tool call differ here.
 */
function contentKey(c: Candidate): string {
  const hash = createHash('sha256');
  for (const row of c.rows) {
    hash.update(new Uint8Array(row.tokens.buffer, row.tokens.byteOffset, row.tokens.byteLength));
    hash.update(row.mask);
    hash.update('\0row\0');
  }
  return hash.digest('hex');
}

/** The share of loss tokens and examples, for the summary. */
export function curationTotals(examples: readonly Candidate[]) {
  return {
    examples: examples.length,
    rows: examples.reduce((a, c) => a + c.rows.length, 0),
    lossTokens: examples.reduce((a, c) => a + lossTokens(c), 0),
    rewardMean: mean(examples.map((c) => c.reward as number)),
  };
}
