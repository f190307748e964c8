import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { probeOrThrow } from '../../process/launch.js';

const gitEnv = {
  ...process.env,
  GIT_AUTHOR_NAME: 'alight',
  GIT_AUTHOR_EMAIL: 'alight@localhost',
  GIT_COMMITTER_NAME: 'alight',
  GIT_COMMITTER_EMAIL: 'alight@localhost',
  GIT_CONFIG_NOSYSTEM: '1',
};

/**
 * git's environment for a folder: it never looks above it for a repository (a workspace under the user's repo stays
 * apart).
 */
export function gitEnvFor(cwd: string): NodeJS.ProcessEnv {
  return { ...gitEnv, GIT_CEILING_DIRECTORIES: dirname(resolve(cwd)) };
}

/** Runs git in `cwd`; its output, or an error with what it said. */
export function git(cwd: string, args: string[], input?: string): string {
  return probeOrThrow('git', args, { cwd, env: gitEnvFor(cwd), input });
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
  const repo = historyRepo(source);
  try {
    git(repo, ['cat-file', '-e', `${commit}^{commit}`]);
  } catch {
    throw new Error(`commit ${commit} is not in ${source}`);
  }
  probeOrThrow('sh', ['-c', 'git -C "$1" archive --format=tar "$2" | tar -x -C "$3"', 'sh', repo, commit, dest]);
  if (!history) return;
  git(dest, ['init', '-q']);
  git(dest, ['add', '-A']);
  git(dest, ['commit', '-q', '--allow-empty', '-m', `base ${commit}`]);
}

/** A file as it was at `commit` (undefined: it did not exist). */
export function fileAt(source: string, commit: string, file: string): string | undefined {
  const repo = historyRepo(source);
  try {
    return probeOrThrow('git', ['-C', repo, 'show', `${commit}:${file}`]);
  } catch {
    return undefined;
  }
}

/** A clone or a bundle's history, as a repository to read from: a bundle is cloned once into a private cache (never
 * beside a workspace, where an agent could read the future from it). */
function historyRepo(source: string): string {
  if (!source.endsWith('.bundle')) return source;
  const dest = join(
    homedir(),
    '.cache',
    'alight',
    'bundles',
    `${basename(source)}-${createHash('sha256').update(resolve(source)).digest('hex').slice(0, 12)}`,
  );
  if (!existsSync(dest)) {
    mkdirSync(dirname(dest), { recursive: true });
    probeOrThrow('git', ['clone', '-q', '--bare', source, `${dest}.tmp`], { env: gitEnv });
    renameSync(`${dest}.tmp`, dest);
  }
  return dest;
}

/**
 * Everything changed in a workspace since its base commit (its first; the agent may have committed), new files
 * included.
 */
export function workspaceDiff(dir: string): string {
  if (!existsSync(join(dir, '.git'))) throw new Error(`${dir} is not a workspace (no .git: removed by the agent?)`);
  const base = git(dir, ['rev-list', '--max-parents=0', 'HEAD']).trim().split('\n')[0];
  git(dir, ['add', '-A']);
  return git(dir, ['diff', '--cached', '--binary', base]);
}
