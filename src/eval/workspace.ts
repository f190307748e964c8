import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

const gitEnv = { ...process.env, GIT_AUTHOR_NAME: 'alight', GIT_AUTHOR_EMAIL: 'alight@localhost', GIT_COMMITTER_NAME: 'alight',
  GIT_COMMITTER_EMAIL: 'alight@localhost', GIT_CONFIG_NOSYSTEM: '1' };

export function git(cwd: string, args: string[], input?: string): string {
  return execFileSync('git', args, { cwd, env: gitEnv, encoding: 'utf8', input, stdio: ['pipe', 'pipe', 'pipe'], maxBuffer: 256 << 20 });
}

/** Where a repository's history lives under `--repos`: a clone `owner__name/` or a bundle `owner__name.bundle`. */
export function repoSource(reposDir: string, repo: string): string {
  const base = join(reposDir, repo.replace('/', '__'));
  if (existsSync(join(base, '.git')) || existsSync(join(base, 'HEAD'))) return base;
  if (existsSync(`${base}.bundle`)) return `${base}.bundle`;
  throw new Error(`repository ${repo} is not in ${reposDir} (expected ${base}/ or ${base}.bundle)`);
}

/**
 * A fresh repository holding only `commit`'s tree, committed once: no history after (or before) it, so an agent
 * cannot read the fix from the future, and `git diff` afterwards shows exactly its changes. With `history: false`
 * (the grader's own workspaces) only the tree: `git apply` works outside a repository, and three git runs fewer is a
 * tenth of a small test suite's time.
 */
export function freshWorkspace(source: string, commit: string, dest: string, history = true): void {
  mkdirSync(dest, { recursive: true });
  const repo = source.endsWith('.bundle') ? bundleClone(source, `${dest}.src`) : source;
  try {
    git(repo, ['cat-file', '-e', `${commit}^{commit}`]);
  } catch {
    throw new Error(`commit ${commit} is not in ${source}`);
  }
  execFileSync('sh', ['-c', `git -C "$1" archive --format=tar "$2" | tar -x -C "$3"`, 'sh', repo, commit, dest]);
  if (!history) return;
  git(dest, ['init', '-q']);
  git(dest, ['add', '-A']);
  git(dest, ['commit', '-q', '--allow-empty', '-m', `base ${commit}`]);
}

/** A file as it was at `commit` (undefined: it did not exist). */
export function fileAt(source: string, commit: string, file: string): string | undefined {
  const repo = source.endsWith('.bundle') ? `${source}.src` : source;
  try {
    return execFileSync('git', ['-C', repo, 'show', `${commit}:${file}`], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 256 << 20 });
  } catch {
    return undefined;
  }
}

function bundleClone(bundle: string, dest: string): string {
  if (!existsSync(dest)) execFileSync('git', ['clone', '-q', '--bare', bundle, dest], { env: gitEnv });
  return dest;
}

/** Everything changed in a workspace since its base commit, new files included, as one diff. */
export function workspaceDiff(dir: string): string {
  git(dir, ['add', '-A']);
  return git(dir, ['diff', '--cached', '--binary', 'HEAD']);
}
