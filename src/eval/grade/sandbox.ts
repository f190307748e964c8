import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { AlightError, ExitCode } from '../../errors.js';
import { probe } from '../../process/launch.js';
import type { SetupListener } from '../../setup/events.js';
import { commandNeed, ensureSystemPackages } from '../../setup/system.js';

/**
 * The local grader's sandbox (bubblewrap): the code under test sees the machine read-only, writes only its workspace,
 * gets a private /tmp and an empty HOME (the real one stays readable, read-only: interpreters installed there, as
 * pyenv's, must run), no network, and its own PID namespace, so that every process it starts dies with the grade. The
 * folders it must not read (the grade's output, the user's site-packages) are covered by empty ones. Memory is bounded
 * with `ulimit -v` inside, processes by process-limit.ts. `results` is the one other writable folder: alight's pytest
 * plugin and its key before the run, its signed record after (pytest-results.ts).
 */
export interface Sandbox {
  /** The writable folder (the workspace). */
  workspace: string;
  /** The results folder (pytest-results.ts): writable too, outside the workspace. */
  results?: string;
  /** Folders the code under test must not see (covered with empty ones). */
  hide: string[];
  /** Virtual memory limit of the test run, MiB. */
  memoryMb: number;
  /** Processes (and threads) the test run may have at once (see process-limit.ts). */
  processes: number;
}

export const defaultMemoryMb = 8192;
export const defaultProcesses = 1024;
const privateHome = '/tmp/home';
const scratchBytes = 2 * 1024 ** 3;
const hiddenBytes = 16 << 20;

let checked: boolean | undefined;

/** Whether bubblewrap runs here (present, and this kernel lets it make namespaces). */
export function sandboxWorks(): boolean {
  checked ??= probe('bwrap', ['--ro-bind', '/', '/', '--unshare-all', '--die-with-parent', 'true']).exitCode === 0;
  return checked;
}

/** Installs bubblewrap where it is missing (apt-get as root or with password-less sudo), then checks that it runs. */
export async function ensureSandbox(listener: SetupListener): Promise<void> {
  try {
    await ensureSystemPackages([commandNeed('bwrap', 'bubblewrap')], 'the sandboxed grader', listener);
  } catch (err) {
    if (!(err instanceof AlightError)) throw err;
    throw new AlightError(`${err.message}\n(or run the tests unsandboxed, as you, with --no-sandbox)`, err.exitCode);
  }
  checked = undefined;
  if (!sandboxWorks()) {
    throw new AlightError(
      'bubblewrap is installed but cannot make namespaces here (a container without user namespaces?): grade in ' +
        'containers with --grader podman|docker, or run the tests ' +
        'unsandboxed with --no-sandbox (the code under test then runs as you)',
      ExitCode.failure,
    );
  }
}

let site: string | null | undefined;

/** The user's site-packages, where a `.pth` would run in every later Python of the user (asked of python3 once). */
function userSite(): string | null {
  if (site === undefined) {
    const res = probe('python3', ['-c', 'import site; print(site.getusersitepackages())']);
    site = res.exitCode === 0 ? res.stdout.trim() : null;
  }
  return site;
}

/**
 * `bwrap …` before the command: mounts in order (later ones cover earlier), the workspace bound last so it stays
 * visible.
 */
export function sandboxArgs(s: Sandbox): string[] {
  const scratch = [...new Set(['/tmp', resolve(tmpdir())])];
  // A folder that does not exist needs no cover (and bwrap could not make its mount point on the read-only root).
  const hidden = [...s.hide, userSite()]
    .filter((p): p is string => Boolean(p) && existsSync(p!))
    .map((p) => resolve(p))
    .filter((p) => !scratch.includes(p));
  return [
    'bwrap',
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    // tmpfs lives in memory: bounded, so that filling it cannot take the machine's.
    ...scratch.flatMap((p) => ['--size', String(scratchBytes), '--tmpfs', p]),
    ...[...new Set(hidden)].flatMap((p) => ['--size', String(hiddenBytes), '--tmpfs', p]),
    '--bind',
    s.workspace,
    s.workspace,
    ...(s.results ? ['--bind', s.results, s.results] : []),
    '--unshare-all',
    '--die-with-parent',
    '--new-session',
    '--chdir',
    s.workspace,
    '--dir',
    privateHome,
    '--setenv',
    'HOME',
    privateHome,
    '--setenv',
    'TMPDIR',
    tmpdir(),
  ];
}
