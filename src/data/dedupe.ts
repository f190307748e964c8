import type { DedupeFacts, DedupeSource, Drop, ExactKey, Group } from '../store/data.js';
import { bandKey, jaccard, lshParams, type MinHashOptions, permutations, shingles, signature } from './minhash.js';

export interface DedupeResult {
  checked: number;
  drops: Drop[];
  groups: Group[];
  exactPairs: number;
  nearPairs: number;
  candidates: number;
  bands: number;
  rows: number;
}

export const exactKeys: ExactKey[] = ['instance-id', 'patch', 'repo-commit-patch', 'statement'];

/**
 * Exact duplicates (same instance id; same normalised patch; same repo + base commit + patch; same normalised problem
 * statement) and near duplicates (MinHash LSH over the statements' word shingles, verified by exact Jaccard ≥
 * threshold) joined into groups; each group keeps its earliest task (by created_at, then import order) and drops the
 * rest, saying of whom it is a duplicate and why. Memory: a few typed arrays per task (its group, its band keys).
 */
export function dedupe(
  source: DedupeSource,
  o: MinHashOptions & { near: boolean },
  progress?: (done: number, total: number) => void,
): DedupeResult {
  const seqs = source.seqs();
  const indexOf = (seq: number): number => binarySearch(seqs, seq);
  const groups = new UnionFind(seqs.length);
  const why = new Map<number, Set<string>>();
  const join = (i: number, j: number, reason: string): void => {
    for (const k of [i, j]) why.set(k, (why.get(k) ?? new Set()).add(reason));
    groups.union(j, i);
  };
  let exactPairs = 0;
  // One statement per distinct text goes on to near-dedupe: k copies would make k² candidate pairs.
  const repeated = new Uint8Array(seqs.length);
  for (const key of exactKeys) {
    let runKey: string | null = null;
    let first = -1;
    for (const t of source.byKey(key)) {
      const i = indexOf(t.seq);
      if (runKey !== t.key) {
        [runKey, first] = [t.key, i];
        continue;
      }
      join(first, i, key);
      exactPairs++;
      if (key === 'statement') repeated[i] = 1;
    }
  }
  const { bands, rows } = lshParams(o.threshold, o.perms);
  let nearPairs = 0;
  let candidates = 0;
  if (o.near) {
    const links = nearLinks(source, seqs, repeated, o, groups, progress);
    candidates = links.candidates;
    for (const [a, b, similarity] of links.pairs) {
      join(a, b, `near (Jaccard ${similarity.toFixed(2)})`);
      nearPairs++;
    }
  }
  return {
    checked: seqs.length,
    ...verdicts(source, seqs, groups, why),
    exactPairs,
    nearPairs,
    candidates,
    bands,
    rows,
  };
}

/** The drops and groups, from the members of groups of two or more (only their facts are read). */
function verdicts(
  source: DedupeSource,
  seqs: Int32Array,
  groups: UnionFind,
  why: Map<number, Set<string>>,
): Pick<DedupeResult, 'drops' | 'groups'> {
  const members = new Map<number, number[]>();
  for (const i of why.keys()) {
    const root = groups.find(i);
    const list = members.get(root);
    if (list) list.push(i);
    else members.set(root, [i]);
  }
  const drops: Drop[] = [];
  const out: Group[] = [];
  for (const group of members.values()) {
    if (group.length < 2) continue;
    const facts = group.sort((a, b) => a - b).map((i) => source.factsOf(seqs[i]));
    const keep = facts.reduce((a, b) => (older(b, a) ? b : a));
    const reasons = [...new Set(group.flatMap((i) => [...why.get(i)!]))];
    out.push({
      group_id: `dup-${keep.uid}`,
      kind: reasons.join(', '),
      members: facts.map((f) => ({ uid: f.uid, kept: f === keep })),
    });
    group.forEach((i, k) => {
      if (facts[k] === keep) return;
      const because = [...why.get(i)!];
      drops.push({
        uid: facts[k].uid,
        rule: because.length === 1 && because[0].startsWith('near') ? 'near-duplicate' : 'duplicate',
        detail: `duplicate of ${keep.instance_id} (${keep.source}) by ${because.join(', ')}`,
      });
    });
  }
  return { drops, groups: out };
}

/** Representatives a bucket keeps to verify its other members against. */
const maxRepresentatives = 16;

/**
 * Near-duplicate links (task indices), enough to join every group: each band's buckets of equal keys, each member
 * verified exactly against the bucket's representatives (its first members not linked to one another, at most 16),
 * never against every other member — templated statements (SWE-smith's) fill one bucket with thousands, and all pairs
 * would be quadratic. Members already in one group are not verified again. The recall cost: two similar texts, neither
 * similar to any of a full bucket's representatives, are linked only if another band brings them together
 * (bench/BENCHMARKS.md measures recall against exact Jaccard). Statements are read again only for bucket members.
 */
function nearLinks(
  source: DedupeSource,
  seqs: Int32Array,
  repeated: Uint8Array,
  o: MinHashOptions,
  groups: UnionFind,
  progress?: (done: number, total: number) => void,
) {
  const { bands, rows } = lshParams(o.threshold, o.perms);
  const coefficients = permutations(o);
  const n = seqs.length;
  const keys = new Float64Array(n * bands).fill(Number.NaN); // NaN: no statement, or a repeated one
  let done = 0;
  for (const { seq, statement } of source.statements()) {
    if (done++ % 1000 === 0) progress?.(done, n);
    const i = binarySearch(seqs, seq);
    const sh = repeated[i] ? null : shingles(statement, o.shingle);
    if (!sh?.length) continue;
    const sig = signature(sh, o, coefficients);
    for (let b = 0; b < bands; b++) keys[i * bands + b] = bandKey(sig, b, rows);
  }
  progress?.(n, n);
  const pairs: [number, number, number][] = [];
  let candidates = 0;
  // A task has keys in every band or in none: which tasks take part is the same for all bands.
  const keyed = Int32Array.from({ length: n }, (_, i) => i).filter((i) => !Number.isNaN(keys[i * bands]));
  for (let b = 0; b < bands; b++) {
    const key = (i: number): number => keys[i * bands + b];
    const order = keyed.slice().sort((x, y) => key(x) - key(y) || x - y);
    for (let start = 0, end = 1; start < order.length; start = end, end = start + 1) {
      while (end < order.length && key(order[end]) === key(order[start])) end++;
      if (end - start < 2) continue;
      const sets = new Map<number, Uint32Array>();
      const setOf = (i: number): Uint32Array =>
        sets.get(i) ?? sets.set(i, shingles(source.statementOf(seqs[i]), o.shingle)).get(i)!;
      const reps = [order[start]];
      for (const i of order.subarray(start + 1, end)) {
        let linked = false;
        for (const r of reps) {
          if (groups.find(r) === groups.find(i)) {
            linked = true;
            break;
          }
          candidates++;
          if ((linked = linkIfNear(r, i, setOf, o.threshold, pairs, groups))) break;
        }
        if (!linked && reps.length < maxRepresentatives) reps.push(i);
        else sets.delete(i); // only the representatives' shingles are needed again
      }
    }
  }
  return { pairs, candidates };
}

/** Near-duplicate links among texts alone (the benchmark's comparison with datasketch). */
export function nearDuplicatePairs(
  texts: string[],
  o: MinHashOptions,
  progress?: (done: number, total: number) => void,
) {
  const seqs = Int32Array.from(texts.keys());
  const source: DedupeSource = {
    seqs: () => seqs,
    byKey: () => [],
    statements: () => texts.map((statement, seq) => ({ seq, statement })),
    statementOf: (seq) => texts[seq],
    factsOf: () => {
      throw new Error('not needed');
    },
  };
  return {
    ...nearLinks(source, seqs, new Uint8Array(texts.length), o, new UnionFind(texts.length), progress),
    ...lshParams(o.threshold, o.perms),
  };
}

function linkIfNear(
  r: number,
  i: number,
  setOf: (i: number) => Uint32Array,
  threshold: number,
  pairs: [number, number, number][],
  groups: UnionFind,
): boolean {
  const similarity = jaccard(setOf(r), setOf(i));
  if (similarity < threshold) return false;
  pairs.push([r, i, similarity]);
  groups.union(i, r);
  return true;
}

class UnionFind {
  private readonly parent: Int32Array;
  constructor(n: number) {
    this.parent = Int32Array.from({ length: n }, (_, i) => i);
  }
  find(i: number): number {
    let x = i;
    while (this.parent[x] !== x) x = this.parent[x] = this.parent[this.parent[x]];
    return x;
  }
  union(child: number, into: number): void {
    this.parent[this.find(child)] = this.find(into);
  }
}

function binarySearch(sorted: Int32Array, value: number): number {
  let lo = 0;
  let hi = sorted.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid] < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Whether `a` was created before `b` (no date counts as last), else imported first. */
function older(a: DedupeFacts, b: DedupeFacts): boolean {
  if (a.created_at !== b.created_at) {
    if (a.created_at === null) return false;
    if (b.created_at === null) return true;
    return a.created_at < b.created_at;
  }
  return a.seq < b.seq;
}
