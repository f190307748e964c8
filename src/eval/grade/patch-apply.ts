import { renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { probe, probeOrThrow, run } from '../../process/launch.js';
import { sandboxWorks } from './sandbox.js';

/**
 * Applying untrusted diffs to a judged tree. Whatever is in the tree is the prediction's word: a `.git` folder or file,
 * a `.gitattributes`. So no git here reads anything of it: git runs against a repository outside the tree (GIT_DIR:
 * an empty private one, or the instance image's history moved out of /testbed) with no global or system configuration,
 * so no filter, hook or driver that the tree names can run, and no variable of the caller's (GIT_*, PATCH_GET) steers
 * it. Where bubblewrap works, each command also runs inside it (the tree the one writable folder, no network, its own
 * PID namespace): git and GNU patch are parsers of hostile text, and nothing they start outlives them.
 */
export interface Target {
  /** The judged tree: the commands' working folder, and the one folder they may write. */
  ws: string;
  /** The repository git runs against, outside `ws`. */
  gitDir: string;
}

/** An empty bare repository at `dir` for a tree that has no history of its own; returns its path. */
export function privateGitDir(dir: string): string {
  probeOrThrow('git', ['init', '--bare', '-q', dir], { env: scrubbed() });
  return dir;
}

/** This process's environment without what would steer git or GNU patch (repository, config, get-from-RCS). */
function scrubbed(): NodeJS.ProcessEnv {
  const steers = /^(GIT_|PATCH_|POSIXLY_CORRECT$|VERSION_CONTROL$|SIMPLE_BACKUP_SUFFIX$|QUOTING_STYLE$)/;
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !steers.test(k)));
}

export function gitEnvAt(t: Target): NodeJS.ProcessEnv {
  return {
    ...scrubbed(),
    GIT_DIR: t.gitDir,
    GIT_WORK_TREE: t.ws,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_ATTR_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 'alight',
    GIT_AUTHOR_EMAIL: 'alight@localhost',
    GIT_COMMITTER_NAME: 'alight',
    GIT_COMMITTER_EMAIL: 'alight@localhost',
  };
}

/** `command` inside bubblewrap where it works: the machine read-only, `ws` writable, `reads` visible, nothing else. */
function confined(command: string, args: string[], t: Target, reads: string[]): [string, string[]] {
  if (!sandboxWorks()) return [command, args];
  const scratch = [...new Set(['/tmp', resolve(tmpdir())])];
  return [
    'bwrap',
    [
      ...['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc'],
      ...scratch.flatMap((p) => ['--tmpfs', p]),
      ...[t.gitDir, ...reads].flatMap((p) => ['--ro-bind', p, p]),
      ...['--bind', t.ws, t.ws, '--unshare-all', '--die-with-parent', '--new-session', '--chdir', t.ws],
      command,
      ...args,
    ],
  ];
}

/** One command on the tree, bounded by `timeoutMs`: whether it exited 0 (or ran out of time), and what it said. */
export async function onTree(
  t: Target,
  command: string,
  args: string[],
  o: { reads?: string[]; timeoutMs: number },
): Promise<{ ok: boolean | 'timeout'; said: string }> {
  const [cmd, argv] = confined(command, args, t, o.reads ?? []);
  const r = await run({
    command: cmd,
    args: argv,
    cwd: t.ws,
    env: gitEnvAt(t),
    stdout: { tail: 4096 },
    stderr: 'stdout',
    group: true,
    timeoutMs: o.timeoutMs,
    killGraceMs: 0,
  });
  return { ok: r.reason === 'timeout' ? 'timeout' : r.exitCode === 0, said: r.stdout };
}

/**
 * The tree back at `gitDir`'s HEAD between tries: tracked files restored, the rest removed, nested repositories too, and
 * a top-level `.git` (which git never counts as the tree's).
 */
export function resetToHead(t: Target): void {
  probeOrThrow('git', ['checkout', '-q', '--', '.'], { cwd: t.ws, env: gitEnvAt(t) });
  probeOrThrow('git', ['clean', '-ffdq'], { cwd: t.ws, env: gitEnvAt(t) });
  rmSync(join(t.ws, '.git'), { recursive: true, force: true });
}

/** A file as `gitDir`'s HEAD has it (undefined: it did not exist), read from the history, never from the tree. */
export function headFile(t: Target, file: string): string | undefined {
  const r = probe('git', ['show', `HEAD:${file}`], { cwd: t.ws, env: gitEnvAt(t) });
  return r.exitCode === 0 ? r.stdout : undefined;
}

/**
 * `t`'s repository replaced by one holding `base` alone (issue 52): that commit and its tree, fetched shallow into a
 * new repository, with no later commit, ref, tag, reflog, remote or stray object, and the index at it. An instance
 * image cloned from the whole repository keeps the fix in a later commit, which the tests and the code under test would
 * otherwise find in /testbed/.git. The commit keeps its id, so the eval script's `git checkout <base> -- …` still works.
 */
export function cutToBase(t: Target, base: string): void {
  const whole = `${t.gitDir}.whole`;
  renameSync(t.gitDir, whole);
  const env = { ...scrubbed(), GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };
  const gitIn = (dir: string, args: string[]) => probeOrThrow('git', ['--git-dir', dir, ...args], { env });
  try {
    gitIn(whole, ['update-ref', 'refs/alight/base', `${base}^{commit}`]);
  } catch {
    throw new Error(`the image's /testbed has no commit ${base} (the task's base_commit)`);
  }
  probeOrThrow('git', ['init', '-q', '--bare', t.gitDir], { env });
  gitIn(t.gitDir, ['fetch', '-q', '--depth', '1', '--no-tags', `file://${whole}`, 'refs/alight/base:refs/heads/base']);
  gitIn(t.gitDir, ['symbolic-ref', 'HEAD', 'refs/heads/base']);
  gitIn(t.gitDir, ['config', 'core.bare', 'false']);
  gitIn(t.gitDir, ['read-tree', 'HEAD']);
  rmSync(join(t.gitDir, 'FETCH_HEAD')); // it names where the commit came from, a path of this machine
  rmSync(whole, { recursive: true, force: true });
}
