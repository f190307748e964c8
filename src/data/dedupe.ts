import type { Drop, Group, TaskFacts } from '../store/data.js';
import { candidatePairs, jaccard, lshParams, permutations, shingles, signature, type MinHashOptions } from './minhash.js';

export type DedupeTask = TaskFacts & { problem_statement: string };
export interface DedupeResult { drops: Drop[]; groups: Group[]; exactPairs: number; nearPairs: number; candidates: number; bands: number; rows: number }

/**
 * Exact duplicates (same instance id; same normalised patch; same repo + base commit + patch; same normalised problem
 * statement) and near duplicates (MinHash LSH over the statements' word shingles, each candidate pair verified by its
 * exact Jaccard ≥ threshold) joined into groups; each group keeps its earliest task (by created_at, then import order)
 * and drops the rest, saying of whom it is a duplicate and why.
 */
export function dedupe(tasks: DedupeTask[], o: MinHashOptions & { near: boolean }, progress?: (done: number, total: number) => void): DedupeResult {
  const parent = tasks.map((_, i) => i);
  const find = (i: number): number => (parent[i] === i ? i : (parent[i] = find(parent[i])));
  const why = tasks.map(() => new Set<string>());
  const join = (i: number, j: number, reason: string): void => {
    why[i].add(reason);
    why[j].add(reason);
    parent[find(i)] = find(j);
  };
  let exactPairs = 0;
  const keys: [string, (t: DedupeTask) => string | null][] = [
    ['instance-id', (t) => t.instance_id],
    ['patch', (t) => (t.patch_bytes > 0 ? t.patch_sha : null)],
    ['repo-commit-patch', (t) => (t.patch_bytes > 0 && t.base_commit ? `${t.repo}@${t.base_commit}:${t.patch_sha}` : null)],
    ['statement', (t) => (t.ps_words > 0 ? t.ps_sha : null)],
  ];
  for (const [reason, key] of keys) {
    const first = new Map<string, number>();
    tasks.forEach((t, i) => {
      const k = key(t);
      if (k === null) return;
      const seen = first.get(k);
      if (seen === undefined) first.set(k, i);
      else { join(seen, i, reason); exactPairs++; }
    });
  }

  let nearPairs = 0;
  let candidates = 0;
  const { bands, rows } = lshParams(o.threshold, o.perms);
  if (o.near) {
    // One task per distinct statement: identical ones are already joined, and k copies would make k² candidate pairs.
    const seen = new Set<string>();
    const reps = tasks.flatMap((t, i) => (seen.has(t.ps_sha) ? [] : (seen.add(t.ps_sha), [i])));
    const near = nearDuplicatePairs(reps.map((i) => tasks[i].problem_statement), o, progress);
    candidates = near.candidates;
    for (const [a, b, similarity] of near.pairs) {
      const [i, j] = [reps[a], reps[b]];
      if (find(i) === find(j)) continue; // already one group (exact duplicates are near ones too)
      join(i, j, `near (Jaccard ${similarity.toFixed(2)})`);
      nearPairs++;
    }
  }

  const members = new Map<number, number[]>();
  tasks.forEach((_, i) => {
    const root = find(i);
    const list = members.get(root);
    if (list) list.push(i);
    else members.set(root, [i]);
  });
  const drops: Drop[] = [];
  const groups: Group[] = [];
  for (const group of members.values()) {
    if (group.length < 2) continue;
    const keep = group.reduce((a, b) => (older(tasks[b], tasks[a]) ? b : a));
    const reasons = [...new Set(group.flatMap((i) => [...why[i]]))];
    groups.push({ group_id: `dup-${tasks[keep].uid}`, kind: reasons.join(', '), members: group.map((i) => ({ uid: tasks[i].uid, kept: i === keep })) });
    for (const i of group) {
      if (i === keep) continue;
      drops.push({ uid: tasks[i].uid, rule: [...why[i]].some((r) => r.startsWith('near')) && why[i].size === 1 ? 'near-duplicate' : 'duplicate',
        detail: `duplicate of ${tasks[keep].instance_id} (${tasks[keep].source}) by ${[...why[i]].join(', ')}` });
    }
  }
  return { drops, groups, exactPairs, nearPairs, candidates, bands, rows };
}

/** Pairs of texts whose word-shingle Jaccard is ≥ the threshold, found by MinHash LSH and verified exactly. */
export function nearDuplicatePairs(texts: string[], o: MinHashOptions, progress?: (done: number, total: number) => void) {
  const { bands, rows } = lshParams(o.threshold, o.perms);
  const coefficients = permutations(o);
  const sets = texts.map((t) => shingles(t, o.shingle));
  const sigs = sets.map((s, i) => {
    if (i % 1000 === 0) progress?.(i, texts.length);
    return s.length ? signature(s, o, coefficients) : new Uint32Array(0);
  });
  progress?.(texts.length, texts.length);
  const candidates = candidatePairs(sigs, bands, rows);
  const pairs: [number, number, number][] = [];
  for (const [i, j] of candidates) {
    const similarity = jaccard(sets[i], sets[j]);
    if (similarity >= o.threshold) pairs.push([i, j, similarity]);
  }
  return { pairs, candidates: candidates.length, bands, rows };
}

/** Whether `a` was created before `b` (no date counts as last), else imported first. */
function older(a: DedupeTask, b: DedupeTask): boolean {
  if (a.created_at !== b.created_at) {
    if (a.created_at === null) return false;
    if (b.created_at === null) return true;
    return a.created_at < b.created_at;
  }
  return a.seq < b.seq;
}
