import { run, type Sink } from '../process/launch.js';

export { abortReason } from '../process/launch.js';

/** One harness (or reward command) run, as the rollout runner asks for it from its launcher. */
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

/**
 * Where the runner's processes run. The runner knows only this: the local one below starts them on this machine;
 * another (a Kubernetes Job per rollout) plugs in without touching the runner.
 */
export interface Launcher {
  readonly name: string;
  run(spec: ProcessSpec): Promise<ProcessResult>;
}

// The harness gets this long to exit after SIGTERM before SIGKILL.
const killGraceMs = 3000;
// The reward is the last number printed: its tail is enough.
const stdoutTail = 64 * 1024;

/**
 * This machine: each process in its own process group (unless it shares the terminal), so that a timeout or Ctrl-C
 * ends everything it started, not just the direct child. A reward command gets its own group too: a background child
 * holding its stdout must not keep it alive.
 */
export const localLauncher: Launcher = {
  name: 'local',
  async run(spec) {
    const files = typeof spec.output === 'string' ? null : spec.output;
    const group = files !== null || spec.captureStdout === true;
    const stdout: Sink = spec.captureStdout
      ? { tail: stdoutTail }
      : files
        ? { file: files.stdout }
        : spec.output === 'stdout-to-stderr'
          ? 'stderr'
          : 'inherit';
    const result = await run({
      command: spec.command,
      args: spec.args,
      env: spec.env,
      cwd: spec.cwd,
      stdin: group ? 'ignore' : 'inherit',
      stdout,
      stderr: files ? { file: files.stderr } : 'inherit',
      group,
      timeoutMs: spec.timeoutMs,
      signal: spec.signal,
      killGraceMs,
    });
    return { exitCode: result.exitCode, reason: result.reason, stdout: result.stdout };
  },
};
