import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { execa, execaSync, type Options, type ResultPromise } from 'execa';
import { OutputTail } from './tail.js';

/**
 * The one place alight starts a process (execa underneath). It owns what every caller needs and used to do its own
 * way: a process group of its own, a timeout and an abort signal that stop it (SIGTERM, then SIGKILL after a grace),
 * output to a file, to our stderr, captured (its tail) or line by line, and a result that never throws.
 */

/** Where a stream goes. `stderr` is ours (keeps our stdout clean for --json); `pipe` is read by the caller. */
export type Sink =
  | 'inherit'
  | 'ignore'
  | 'stderr'
  | 'pipe'
  | { file: string }
  | { tail: number }
  | { lines: (line: string) => void };

export interface LaunchSpec {
  command: string;
  args: string[];
  cwd?: string;
  /** The whole environment (default: this process's); what the caller left out stays out. */
  env?: NodeJS.ProcessEnv;
  stdin?: 'ignore' | 'inherit' | 'pipe';
  stdout?: Sink;
  /** `stdout`: into stdout's sink, interleaved. */
  stderr?: Sink | 'stdout';
  /**
   * A process group of its own: a stop signals the whole group, and once the leader exits, what it left in the group
   * goes too (with any pipe it held open). Not for a process that shares the terminal: Ctrl-C reaches that one itself.
   */
  group?: boolean;
  timeoutMs?: number | null;
  signal?: AbortSignal;
  /** Between SIGTERM and SIGKILL; 0 kills at once. */
  killGraceMs?: number;
  /** Called once when a timeout or the signal stops it (to remove what the process cannot: its container). */
  onStop?: () => void;
}

export interface Finished {
  exitCode: number | null;
  /** Why it ended other than by exiting: `timeout`, the abort's reason, `killed by SIGx`, or `cannot start …`. */
  reason: string | null;
  /** The captured tail (a `tail` sink), else ''. */
  stdout: string;
  stderr: string;
  /** A captured tail lost its beginning. */
  truncated: boolean;
}

export interface Running {
  pid: number | undefined;
  stdin: Writable | null;
  stdout: Readable | null;
  stderr: Readable | null;
  finished: Promise<Finished>;
  /** Stops it as a timeout would (SIGTERM, SIGKILL after `graceMs`), with `why` as its reason; resolves once ended. */
  stop(why: string, graceMs?: number): Promise<Finished>;
  /** Sends a signal (to its group, if it has one) without making it a stop: its result says how it ended. */
  kill(sig: NodeJS.Signals): void;
  /** Whether it has exited (its pipes may still be open) or could not start. */
  exited(): boolean;
}

const defaultGraceMs = 3000;
// After the leader exits, how long a pipe held open by an escaped background process may hold the result.
const pipeLingerMs = 100;

/** Starts a process; see the module comment. A start failure (no such command) is a result, not an exception. */
export function start(spec: LaunchSpec): Running {
  const capture = { stdout: sinkTail(spec.stdout), stderr: spec.stderr === 'stdout' ? null : sinkTail(spec.stderr) };
  const options: Options = {
    cwd: spec.cwd,
    env: spec.env ?? process.env,
    extendEnv: false,
    stdin: spec.stdin ?? 'ignore',
    stdout: stdio(spec.stdout),
    stderr: stdio(spec.stderr === 'stdout' ? spec.stdout : spec.stderr),
    detached: spec.group === true,
    reject: false,
    buffer: false,
    // The caller chose the grace; execa's own would signal only the leader.
    forceKillAfterDelay: false,
  };
  const child = execa(spec.command, spec.args, options);
  const flow = { lastData: 0, ours: [] as Readable[] };
  const stdoutSink = capture.stdout ?? lineSink(spec.stdout);
  read(child.stdout, stdoutSink, flow);
  read(child.stderr, spec.stderr === 'stdout' ? stdoutSink : (capture.stderr ?? lineSink(spec.stderr)), flow);
  return supervise(child, spec, capture, flow);
}

/** The streams this module reads (not the caller's pipes), and when data last came. */
interface Flow {
  lastData: number;
  ours: Readable[];
}

/** Runs a process to its end. */
export function run(spec: LaunchSpec): Promise<Finished> {
  return start(spec).finished;
}

function supervise(
  child: ResultPromise,
  spec: LaunchSpec,
  capture: { stdout: OutputTail | null; stderr: OutputTail | null },
  flow: Flow,
): Running {
  let reason: string | null = null;
  let exited = false;
  let killTimer: NodeJS.Timeout | undefined;
  const group = spec.group === true;
  const signalAll = (sig: NodeJS.Signals): void => signal(child.pid, group, sig, child);
  const stop = (why: string, graceMs = spec.killGraceMs ?? defaultGraceMs): void => {
    if (reason !== null || exited) return;
    reason = why;
    spec.onStop?.();
    signalAll(graceMs === 0 ? 'SIGKILL' : 'SIGTERM');
    if (graceMs > 0) killTimer = setTimeout(() => signalAll('SIGKILL'), graceMs);
  };
  const timer = spec.timeoutMs == null ? undefined : setTimeout(() => stop('timeout'), spec.timeoutMs);
  const onAbort = (): void => stop(abortReason(spec.signal!));
  spec.signal?.addEventListener('abort', onAbort, { once: true });
  if (spec.signal?.aborted) onAbort();
  child.once('exit', () => {
    exited = true;
    clearTimeout(killTimer);
    if (group) signalAll('SIGKILL');
    setTimeout(() => closeIdlePipes(flow), pipeLingerMs).unref();
  });
  const finished = child.then((r) => {
    exited = true;
    clearTimeout(timer);
    clearTimeout(killTimer);
    spec.signal?.removeEventListener('abort', onAbort);
    const notStarted = r.exitCode === undefined && r.signal === undefined;
    const hint = r.code === 'ENOENT' ? ' (is it installed and on PATH?)' : '';
    return {
      exitCode: r.exitCode ?? null,
      reason: notStarted
        ? `cannot start ${spec.command}: ${r.code ?? r.originalMessage}${hint}`
        : (reason ?? (r.signal ? `killed by ${r.signal}` : null)),
      stdout: capture.stdout?.text() ?? '',
      stderr: capture.stderr?.text() ?? '',
      truncated: (capture.stdout?.truncated ?? false) || (capture.stderr?.truncated ?? false),
    };
  });
  return {
    pid: child.pid,
    stdin: child.stdin,
    stdout: child.stdout,
    stderr: child.stderr,
    finished,
    exited: () => exited,
    kill: signalAll,
    stop: (why, graceMs) => {
      stop(why, graceMs);
      return finished;
    },
  };
}

function stdio(
  sink: Sink | undefined,
): 'inherit' | 'ignore' | 'pipe' | typeof process.stderr | { file: string; append: true } {
  if (sink === undefined || sink === 'ignore') return 'ignore';
  if (sink === 'inherit') return 'inherit';
  if (sink === 'stderr') return process.stderr;
  // Appended to, not truncated: a retried rollout's log keeps the first try.
  if (typeof sink === 'object' && 'file' in sink) return { file: sink.file, append: true };
  return 'pipe';
}

function sinkTail(sink: Sink | 'stdout' | undefined): OutputTail | null {
  return typeof sink === 'object' && 'tail' in sink ? new OutputTail(sink.tail) : null;
}

function lineSink(sink: Sink | 'stdout' | undefined): ((line: string) => void) | null {
  return typeof sink === 'object' && 'lines' in sink ? sink.lines : null;
}

function read(stream: Readable | null, into: OutputTail | ((line: string) => void) | null, flow: Flow): void {
  if (!stream || !into) return;
  flow.ours.push(stream);
  stream.on('data', () => (flow.lastData = Date.now()));
  if (into instanceof OutputTail) stream.on('data', (b: Buffer) => into.push(b));
  else createInterface({ input: stream }).on('line', into);
}

/**
 * Once the leader has exited, a pipe still open is either draining (data still coming) or held by a process that left
 * the group (setsid) in the background: that one must not hold the result, so a pipe quiet for a moment is closed.
 */
function closeIdlePipes(flow: Flow): void {
  const open = flow.ours.filter((s) => !s.readableEnded && !s.destroyed);
  if (!open.length) return;
  if (Date.now() - flow.lastData >= pipeLingerMs) {
    for (const s of open) s.destroy();
    return;
  }
  setTimeout(() => closeIdlePipes(flow), pipeLingerMs).unref();
}

function signal(pid: number | undefined, group: boolean, sig: NodeJS.Signals, child: ResultPromise): void {
  if (!pid) return;
  try {
    if (group) process.kill(-pid, sig);
    else child.kill(sig);
  } catch {
    // Already gone.
  }
}

/** Why a run was stopped: the reason its controller gave (`abort('…')`), else Ctrl-C's `interrupted`. */
export function abortReason(signal: AbortSignal): string {
  return typeof signal.reason === 'string' ? signal.reason : 'interrupted';
}

export interface Probe {
  /** null: it did not start (or was killed). */
  exitCode: number | null;
  stdout: string;
  stderr: string;
  /** Why it did not start (`ENOENT`), else null. */
  startError: string | null;
}

/**
 * A short command run to its end, blocking: probes (`bwrap … true`, `nvidia-smi -L`), git plumbing, one-line Python
 * questions. Never throws.
 */
export function probe(
  command: string,
  args: string[],
  o: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number } = {},
): Probe {
  const r = execaSync(command, args, {
    cwd: o.cwd,
    env: o.env ?? process.env,
    extendEnv: false,
    input: o.input,
    stdin: o.input === undefined ? 'ignore' : undefined,
    timeout: o.timeoutMs,
    reject: false,
    maxBuffer: 256 << 20,
    stripFinalNewline: false,
  });
  const notStarted = r.exitCode === undefined && r.signal === undefined;
  return {
    exitCode: r.exitCode ?? null,
    stdout: typeof r.stdout === 'string' ? r.stdout : '',
    stderr: typeof r.stderr === 'string' ? r.stderr : '',
    startError: notStarted ? String(r.code ?? r.originalMessage) : null,
  };
}
