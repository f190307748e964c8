import { type ChildProcess, type StdioOptions, spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';

export interface ProcessSpec {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd?: string;
  /** `inherit` attaches the terminal (`stdout-to-stderr` keeps our stdout clean for --json); else these files. */
  output: ProcessOutput;
  timeoutMs: number | null;
  signal: AbortSignal;
  /** Collected instead of written to a file (for reward commands). */
  captureStdout?: boolean;
}

export type ProcessOutput = 'inherit' | 'stdout-to-stderr' | { stdout: string; stderr: string };

export interface ProcessResult {
  exitCode: number | null;
  /**
   * Why it ended other than by exiting: `timeout`, the abort's reason (`interrupted` for Ctrl-C), a signal name, or a
   * start error.
   */
  reason: string | null;
  stdout: string;
}

// The harness gets this long to exit after SIGTERM before SIGKILL.
const killGraceMs = 3000;
const stdoutTail = 64 * 1024;

/**
 * Runs one process in its own process group (unless it shares the terminal), so that a timeout or Ctrl-C
 * ends everything it started, not just the direct child.
 */
export function runProcess(spec: ProcessSpec): Promise<ProcessResult> {
  const files = typeof spec.output === 'string' ? null : spec.output;
  // A reward command gets its own group too: a background child holding its stdout must not keep it alive.
  const group = files !== null || spec.captureStdout === true;
  const fds: number[] = [];
  const open = (path: string): number => {
    const fd = openSync(path, 'a');
    fds.push(fd);
    return fd;
  };
  const closeFiles = (): void => {
    for (const fd of fds.splice(0)) closeSync(fd);
  };
  const stdio: StdioOptions = [
    group ? 'ignore' : 'inherit',
    spec.captureStdout ? 'pipe' : files ? open(files.stdout) : spec.output === 'stdout-to-stderr' ? 2 : 'inherit',
    files ? open(files.stderr) : 'inherit',
  ];

  return new Promise((resolve) => {
    let child: ChildProcess;
    try {
      child = spawn(spec.command, spec.args, { env: spec.env, cwd: spec.cwd, stdio, detached: group });
    } catch (err) {
      closeFiles();
      return resolve({ exitCode: null, reason: `cannot start ${spec.command}: ${(err as Error).message}`, stdout: '' });
    }
    let reason: string | null = null;
    let stdout = '';
    let killTimer: NodeJS.Timeout | undefined;
    child.stdout?.setEncoding('utf8').on('data', (s: string) => {
      stdout += s;
      // The reward is the last number printed: keep the tail.
      if (stdout.length > stdoutTail * 2) stdout = stdout.slice(-stdoutTail);
    });

    const stop = (why: string): void => {
      if (reason !== null) return;
      reason = why;
      signal(child.pid, group, 'SIGTERM');
      killTimer = setTimeout(() => signal(child.pid, group, 'SIGKILL'), killGraceMs);
    };
    const timer = spec.timeoutMs === null ? undefined : setTimeout(() => stop('timeout'), spec.timeoutMs);
    const onAbort = (): void => stop(abortReason(spec.signal));
    spec.signal.addEventListener('abort', onAbort, { once: true });
    if (spec.signal.aborted) onAbort();

    const finish = (result: ProcessResult): void => {
      clearTimeout(timer);
      clearTimeout(killTimer);
      spec.signal.removeEventListener('abort', onAbort);
      closeFiles();
      resolve(result);
    };
    child.once('error', (err: NodeJS.ErrnoException) => {
      const hint = err.code === 'ENOENT' ? ' (is it installed and on PATH?)' : '';
      finish({ exitCode: null, reason: `cannot start ${spec.command}: ${err.code ?? err.message}${hint}`, stdout });
    });
    // Once the leader exits, whatever it left in its group goes too (and with it any pipe held open).
    child.once('exit', () => {
      if (group) signal(child.pid, group, 'SIGKILL');
    });
    child.once('close', (code, sig) =>
      finish({ exitCode: code, reason: reason ?? (sig ? `killed by ${sig}` : null), stdout }),
    );
  });
}

function signal(pid: number | undefined, group: boolean, sig: NodeJS.Signals): void {
  if (!pid) return;
  try {
    process.kill(group ? -pid : pid, sig);
  } catch {
    // Already gone.
  }
}

/** Why a run of harnesses was stopped: the reason its controller gave (`abort('…')`), else Ctrl-C's `interrupted`. */
export function abortReason(signal: AbortSignal): string {
  return typeof signal.reason === 'string' ? signal.reason : 'interrupted';
}
