import { permutation } from '../algo/schedule.js';
import { AlightError, ExitCode } from '../errors.js';
import type { Drop } from '../store/data.js';
import type { Probe } from '../store/data-measures.js';
import type { Store } from '../store/store.js';

/** A solve-rate range as written on the command line: `0<r<1`, `0<=r<1`, `0.25<=r<=0.75`. */
export interface RateRange {
  lo: number;
  loInclusive: boolean;
  hi: number;
  hiInclusive: boolean;
}

export function parseRateRange(text: string): RateRange | null {
  const m = /^\s*(\d*\.?\d+)\s*(<=?)\s*r\s*(<=?)\s*(\d*\.?\d+)\s*$/.exec(text);
  if (!m) return null;
  const range = { lo: Number(m[1]), loInclusive: m[2] === '<=', hi: Number(m[4]), hiInclusive: m[3] === '<=' };
  return range.lo <= range.hi && range.hi <= 1 ? range : null;
}

const within = (r: number, range: RateRange): boolean =>
  (range.loInclusive ? r >= range.lo : r > range.lo) && (range.hiInclusive ? r <= range.hi : r < range.hi);

export type Band = 'not-probed' | 'unsolved' | 'mixed' | 'solved';

export function bandOf(p: Probe | undefined): Band {
  if (!p) return 'not-probed';
  return p.passes === 0 ? 'unsolved' : p.passes >= p.k ? 'solved' : 'mixed';
}

export interface SelectOptions {
  rate: RateRange;
  /** Never-solved tasks added besides the range (a seeded sample). */
  addUnsolved: number;
  /** Of the selected, how many to hold out for validation (a seeded sample). */
  val: number;
  seed: number;
}

/**
 * The training set from one probe (pure): the tasks whose solve rate is in the range, plus `addUnsolved` never-solved
 * ones, less `val` held out; every other task a drop with its reason. GRPO learns only from groups whose rewards
 * differ, so tasks always or never solved cost compute and teach nothing (a few unsolved ones keep the hard end).
 */
export function selectTasks(
  tasks: { uid: string; repo: string }[],
  probes: Map<string, Probe>,
  o: SelectOptions,
): { drops: Drop[]; kept: string[]; heldOut: string[] } {
  const drops: Drop[] = [];
  const chosen: string[] = [];
  const unsolved: string[] = [];
  for (const t of tasks) {
    const p = probes.get(t.uid);
    if (!p) drops.push({ uid: t.uid, rule: 'not-probed', detail: 'no measurement in this probe run' });
    else if (within(p.passes / p.k, o.rate)) chosen.push(t.uid);
    else if (p.passes === 0) unsolved.push(t.uid);
    else drops.push({ uid: t.uid, rule: 'solve-rate', detail: `solved ${p.passes}/${p.k}: outside the range` });
  }
  const added = new Set(sample(unsolved, o.addUnsolved, o.seed));
  for (const uid of unsolved) {
    if (added.has(uid)) chosen.push(uid);
    else drops.push({ uid, rule: 'unsolved', detail: `never solved, not among the ${o.addUnsolved} added` });
  }
  const heldOut = new Set(sample(chosen, o.val, o.seed + 1));
  for (const uid of heldOut) drops.push({ uid, rule: 'held-out', detail: `one of ${o.val} held out for validation` });
  return { drops, kept: chosen.filter((uid) => !heldOut.has(uid)), heldOut: [...heldOut] };
}

/** `n` of `items`, seeded, in their original order. */
function sample<T>(items: T[], n: number, seed: number): T[] {
  if (n >= items.length) return items;
  const order = permutation(items.length, seed)
    .slice(0, n)
    .sort((a, b) => a - b);
  return order.map((i) => items[i]);
}

export interface SelectSummary {
  run: string;
  checked: number;
  kept: number;
  heldOut: number;
  /** Per band: the tasks in it and how many are kept (held-out ones not counted). */
  bands: Record<Band, { tasks: number; kept: number }>;
  repos: { repo: string; kept: number }[];
  byRule: Record<string, number>;
}

/**
 * `alight data select`: the tasks the earlier stages kept, chosen from one probe run's measurements (the latest when
 * none is named); the select stage's drops replace the last selection's.
 */
export function applySelection(store: Store, run: string | undefined, o: SelectOptions): SelectSummary {
  const runs = store.measures.probeRuns();
  const chosenRun = run ?? runs.at(-1)?.run;
  if (!chosenRun || !runs.some((r) => r.run === chosenRun))
    throw new AlightError(
      run
        ? `no probe run ${run} (probed: ${runs.map((r) => r.run).join(', ') || 'none'})`
        : 'no probe yet: run alight data probe first',
      ExitCode.input,
    );
  const tasks = [...store.data.eachKeptTask('select')];
  const probes = store.measures.probesOf(chosenRun);
  const { drops, kept, heldOut } = selectTasks(tasks, probes, o);
  store.data.setStage('select', drops);
  const keptSet = new Set(kept);
  const bands = Object.fromEntries(
    (['mixed', 'unsolved', 'solved', 'not-probed'] as Band[]).map((b) => [b, { tasks: 0, kept: 0 }]),
  ) as SelectSummary['bands'];
  const repos = new Map<string, number>();
  for (const t of tasks) {
    const band = bands[bandOf(probes.get(t.uid))];
    band.tasks++;
    if (!keptSet.has(t.uid)) continue;
    band.kept++;
    repos.set(t.repo, (repos.get(t.repo) ?? 0) + 1);
  }
  const byRule: Record<string, number> = {};
  for (const d of drops) byRule[d.rule] = (byRule[d.rule] ?? 0) + 1;
  return {
    run: chosenRun,
    checked: tasks.length,
    kept: kept.length,
    heldOut: heldOut.length,
    bands,
    repos: [...repos].map(([repo, n]) => ({ repo, kept: n })).sort((a, b) => b.kept - a.kept),
    byRule,
  };
}
