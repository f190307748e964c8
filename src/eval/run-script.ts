import { spawn, spawnSync } from 'node:child_process';
import { type Runtime, runtimes } from './container.js';
import { markers } from './grading.js';
import { type ProcessLimit, processLimit } from './process-limit.js';
import { type Sandbox, sandboxArgs } from './sandbox.js';

export interface ScriptOptions {
  timeoutMs: number;
  container?: { runtime: Runtime; image: string; mounts: string[] };
  sandbox?: Sandbox;
  /** Output kept at most: its tail, the log then marked truncated. */
  maxOutputBytes: number;
}

const { truncated: truncatedMarker, timedOut: timedOutMarker } = markers;

/** The command line for a script: in a fresh container, in the sandbox, or plain. */
function commandFor(body: string, o: ScriptOptions, name: string, limit: ProcessLimit | null): string[] {
  if (o.container) {
    return [
      o.container.runtime,
      'run',
      '--rm',
      ...runtimes[o.container.runtime].runFlags,
      '--name',
      name,
      ...o.container.mounts.flatMap((m) => ['-v', m]),
      '-w',
      '/testbed',
      o.container.image,
      'bash',
      '-c',
      body,
    ];
  }
  if (o.sandbox && limit)
    return [
      ...limit.prefix,
      ...sandboxArgs(o.sandbox),
      'bash',
      '-c',
      `${limit.shell}ulimit -v ${o.sandbox.memoryMb * 1024}\n${body}`,
    ];
  return ['bash', '-c', body];
}

/** Keeps the last `max` bytes of a stream. */
class Tail {
  private chunks: Buffer[] = [];
  private size = 0;
  truncated = false;

  constructor(private readonly max: number) {}

  push(b: Buffer): void {
    this.chunks.push(b);
    this.size += b.length;
    while (this.size > this.max && this.chunks.length) {
      const first = this.chunks[0];
      const over = this.size - this.max;
      this.truncated = true;
      if (first.length <= over) {
        this.chunks.shift();
        this.size -= first.length;
      } else {
        this.chunks[0] = first.subarray(over);
        this.size -= over;
      }
    }
  }

  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

/**
 * Runs a grading script (stderr into stdout) and logs the exit status the process returned, not anything the code
 * under test printed; a run past the timeout is killed with its process group (its container removed; the sandbox's
 * PID namespace takes every process with it) and marked, and so is output over the cap (its tail kept).
 */
export function runScript(cwd: string, script: string, o: ScriptOptions): Promise<string> {
  const name = `alight-grade-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
  const limit = o.sandbox ? processLimit(o.sandbox.processes, name) : null;
  const [cmd, ...args] = commandFor(`exec 2>&1\n${script}`, o, name, limit);
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const out = new Tail(o.maxOutputBytes);
    let timedOut = false;
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => out.push(d));
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        /* gone */
      }
      if (o.container) spawnSync(o.container.runtime, ['rm', '-f', name], { stdio: 'ignore' });
    }, o.timeoutMs);
    let done = false;
    const finish = (code: number | null): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      child.stdout.destroy();
      child.stderr.destroy();
      // Whatever else of the grade's process group is left (a background child unsandboxed) goes with it.
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        /* all gone */
      }
      const forged = new RegExp(`^.*(${markers.exitCode}|${truncatedMarker}|${timedOutMarker}).*$`, 'gm');
      const end = timedOut ? `\n${timedOutMarker}\n` : `\n${markers.exitCode}: ${code ?? 137}\n`;
      const log = `${out.text().replace(forged, '')}${out.truncated ? `\n${truncatedMarker}\n` : ''}${end}`;
      void (limit?.release() ?? Promise.resolve()).then(() => resolve(log));
    };
    // Normally the pipes close as the process exits; a background child holding them open must not hold the grade.
    let exitCode: number | null = null;
    child.on('exit', (code) => {
      exitCode = code;
      setTimeout(() => finish(code), 100);
    });
    child.on('close', (code) => finish(code ?? exitCode));
  });
}

/** One command (an apply try) with a deadline, without blocking the other grades: true if it exited 0. */
export function runBounded(
  cmd: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<boolean | 'timeout'> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd, env, stdio: 'ignore', detached: true });
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        /* gone */
      }
      resolve('timeout');
    }, timeoutMs);
    child.on('error', () => {
      clearTimeout(timer);
      resolve(false);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve(code === 0);
    });
  });
}
