import type { Drop } from '../store/data.js';
import { matchedText, patchHash, words } from './patch.js';
import type { DataTask } from './task.js';

/**
 * What a task set must not share with a benchmark: ids, (repo, base commit), gold patches, repos, statement n-grams.
 */
export interface Reference {
  ids: Set<string>;
  commits: Set<string>;
  patches: Set<string>;
  repos: Set<string>;
  /** Hashes of the statements' word n-grams, with one example text each. */
  ngrams: Map<string, string>;
}

export function emptyReference(): Reference {
  return { ids: new Set(), commits: new Set(), patches: new Set(), repos: new Set(), ngrams: new Map() };
}

/**
 * Adds a reference row (any SWE-bench-style row: only instance_id, repo, base_commit, patch and problem_statement are
 * read).
 */
export function addReference(ref: Reference, row: Record<string, unknown>, ngram: number): void {
  const str = (k: string): string | null => (typeof row[k] === 'string' && row[k] ? (row[k] as string) : null);
  const id = str('instance_id');
  const repo = str('repo');
  const commit = str('base_commit');
  const patch = str('patch');
  const statement = str('problem_statement');
  if (id) ref.ids.add(id);
  if (repo) ref.repos.add(repo);
  if (repo && commit) ref.commits.add(`${repo}@${commit}`);
  if (patch) ref.patches.add(patchHash(patch));
  if (statement) for (const g of ngramsOf(statement, ngram)) ref.ngrams.set(g, g);
}

/**
 * Drops what overlaps the reference (its ids, its (repo, base commit) pairs, its patches, and unless `keepRepos` its
 * repositories) and flags, without dropping, problem statements that share a word n-gram with the reference's.
 */
export function decontaminate(
  tasks: Iterable<DataTask>,
  ref: Reference,
  o: { keepRepos: boolean; ngram: number },
): { drops: Drop[]; flags: { uid: string; kind: string; detail: string }[] } {
  const drops: Drop[] = [];
  const flags: { uid: string; kind: string; detail: string }[] = [];
  for (const t of tasks) {
    const hit = ref.ids.has(t.instance_id)
      ? ['benchmark-id', `instance id ${t.instance_id} is in the reference`]
      : t.base_commit && ref.commits.has(`${t.repo}@${t.base_commit}`)
        ? ['benchmark-commit', `${t.repo} at ${t.base_commit} is in the reference`]
        : t.patch && ref.patches.has(t.patch_sha)
          ? ['benchmark-patch', "its patch is a reference task's patch"]
          : !o.keepRepos && ref.repos.has(t.repo)
            ? ['benchmark-repo', `repository ${t.repo} is a reference repository (--keep-repos keeps it)`]
            : null;
    if (hit) drops.push({ uid: t.uid, rule: hit[0], detail: hit[1] });
    else if (ref.ngrams.size) {
      const shared = ngramsOf(t.problem_statement, o.ngram).find((g) => ref.ngrams.has(g));
      if (shared)
        flags.push({
          uid: t.uid,
          kind: 'ngram-overlap',
          detail: `shares the ${o.ngram}-word run "${shared}" with a reference statement`,
        });
    }
  }
  return { drops, flags };
}

function ngramsOf(text: string, n: number): string[] {
  const w = words(matchedText(text));
  const out: string[] = [];
  for (let i = 0; i + n <= w.length; i++) out.push(w.slice(i, i + n).join(' '));
  return out;
}
