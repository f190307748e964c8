import { probe, run } from '../../process/launch.js';
import { type Runtime, runtimes } from './container.js';
import { markers } from './grading.js';
import { type ProcessLimit, processLimit } from './process-limit.js';
import { type Sandbox, sandboxArgs } from './sandbox.js';
import { sandboxEnv } from './sandbox-view.js';

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

/**
 * Runs a grading script (stderr into stdout) and logs the exit status the process returned, not anything the code
 * under test printed; a run past the timeout is killed with its process group (its container removed; the sandbox's
 * PID namespace takes every process with it) and marked, and so is output over the cap (its tail kept).
 */
export async function runScript(cwd: string, script: string, o: ScriptOptions): Promise<string> {
  const name = `alight-grade-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
  const limit = o.sandbox ? processLimit(o.sandbox.processes, name) : null;
  const [command, ...args] = commandFor(`exec 2>&1\n${script}`, o, name, limit);
  const r = await run({
    command,
    args,
    cwd,
    // bwrap stays in the sandbox's PID namespace as its process 1, whose /proc/1/environ the code under test can read:
    // it starts with the sandbox's environment, not the grader's.
    env: o.sandbox ? sandboxEnv() : undefined,
    stdout: { tail: o.maxOutputBytes },
    stderr: 'stdout',
    group: true,
    timeoutMs: o.timeoutMs,
    killGraceMs: 0,
    onStop: () => {
      if (o.container) probe(o.container.runtime, ['rm', '-f', name]);
    },
  });
  await limit?.release();
  return scriptLog(r.stdout, r.truncated, r.reason === 'timeout', r.exitCode);
}

/**
 * A grading script's log: its output without lines that forge alight's markers, then whether it was cut, and the exit
 * status its runner saw (or that it ran out of time).
 */
export function scriptLog(output: string, truncated: boolean, timedOut: boolean, exitCode: number | null): string {
  const forged = new RegExp(`^.*(${markers.exitCode}|${truncatedMarker}|${timedOutMarker}).*$`, 'gm');
  const end = timedOut ? `\n${timedOutMarker}\n` : `\n${markers.exitCode}: ${exitCode ?? 137}\n`;
  return `${output.replace(forged, '')}${truncated ? `\n${truncatedMarker}\n` : ''}${end}`;
}
