import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { AlightError, ExitCode } from '../../errors.js';
import { probe } from '../../process/launch.js';
import type { SetupListener } from '../../setup/events.js';
import { commandNeed, ensureSystemPackages } from '../../setup/system.js';
import { testRuntime } from './interpreter.js';
import { privateHome, runtimeView, sandboxEnv } from './sandbox-view.js';

/**
 * The local grader's sandbox (bubblewrap): the code under test sees a view built up from the runtime, read-only
 * (sandbox-view.ts), writes only its workspace, gets a private /tmp with an empty HOME in it, an environment of named
 * variables only, no network, and its own PID namespace, so that every process it starts dies with the grade. Memory is
 * bounded with `ulimit -v` inside, processes by process-limit.ts. `results` is the one other writable folder: alight's
 * pytest plugin and its key before the run, its signed record after (pytest-results.ts).
 */
export interface Sandbox {
  /** The writable folder (the workspace). */
  workspace: string;
  /** The results folder (pytest-results.ts): writable too, outside the workspace. */
  results?: string;
  /** Virtual memory limit of the test run, MiB. */
  memoryMb: number;
  /** Processes (and threads) the test run may have at once (see process-limit.ts). */
  processes: number;
}

export const defaultMemoryMb = 8192;
export const defaultProcesses = 1024;
const scratchBytes = 2 * 1024 ** 3;

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

/**
 * `bwrap …` before the command. Mounts apply in order, later ones over earlier: the private scratch folders first, the
 * runtime into them where it lives there, the workspace and results last.
 */
export function sandboxArgs(s: Sandbox): string[] {
  const scratch = [...new Set(['/tmp', resolve(tmpdir())])];
  return [
    'bwrap',
    // tmpfs lives in memory: bounded, so that filling it cannot take the machine's.
    ...scratch.flatMap((p) => ['--size', String(scratchBytes), '--tmpfs', p]),
    ...runtimeView(testRuntime()?.prefixes ?? []),
    '--dev',
    '/dev',
    '--proc',
    '/proc',
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
    '--clearenv',
    ...Object.entries(sandboxEnv()).flatMap(([name, value]) => ['--setenv', name, value]),
  ];
}
