import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { execa, execaSync, type Options, type ResultPromise } from 'execa';
import { AlightError, ExitCode } from '../errors.js';
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
   * A process group of its own: a stop signals the whole group; once the leader exits by itself, what it left in the
   * group goes too (one we stopped keeps the rest of its grace), and a pipe an escaped process holds is closed. Not for a process that shares the terminal: Ctrl-C reaches that one itself.
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
  /**
   * How the process itself ended (`exited with code N`, `killed by SIGx`, `cannot start …`), as soon as it did: before
   * `finished` where something it left behind still holds a pipe.
   */
  exit: Promise<string>;
  /** Stops it as a timeout would (SIGTERM, SIGKILL after `graceMs`), with `why` as its reason; resolves once ended. */
  stop(why: string, graceMs?: number): Promise<Finished>;
  /** Sends a signal (to its group, if it has one) without making it a stop: its result says how it ended. */
  kill(sig: NodeJS.Signals): void;
  /** Whether it has exited (its pipes may still be open) or could not start. */
  exited(): boolean;
}

const defaultGraceMs = 3000;
// After a group's leader exits, how long a quiet pipe may stay open (held by a process that escaped the group), and
// how long one still carrying data may (an escaped process printing without end).
const pipeLingerMs = 100;
const pipeLingerMaxMs = 2000;

/** Starts a process; see the module comment. A start failure (no such command) is a result, not an exception. */
export function start(spec: LaunchSpec): Running {
  const capture = { stdout: sinkTail(spec.stdout), stderr: spec.stderr === 'stdout' ? null : sinkTail(spec.stderr) };
  const files: number[] = [];
  let stdout: StdioOption;
  let stderr: StdioOption;
  try {
    stdout = stdio(spec.stdout, files);
    stderr = stdio(spec.stderr === 'stdout' ? spec.stdout : spec.stderr, files);
  } catch (err) {
    for (const fd of files) closeSync(fd);
    return notStarted(`cannot start ${spec.command}: cannot open its log (${(err as Error).message})`);
  }
  const options: Options = {
    cwd: spec.cwd,
    env: spec.env ?? process.env,
    extendEnv: false,
    stdin: spec.stdin ?? 'ignore',
    stdout,
    stderr,
    detached: spec.group === true,
    reject: false,
    buffer: false,
    // The caller chose the grace; execa's own would signal only the leader.
    forceKillAfterDelay: false,
  };
  const child = execa(spec.command, spec.args, options);
  for (const fd of files) closeSync(fd);
  const flow = { lastData: 0, ours: [] as Readable[] };
  const stdoutSink = capture.stdout ?? lineSink(spec.stdout);
  read(child.stdout, stdoutSink, flow);
  read(child.stderr, spec.stderr === 'stdout' ? stdoutSink : (capture.stderr ?? lineSink(spec.stderr)), flow);
  return supervise(child, spec, capture, flow);
}

/** A process that never ran: its result says why. */
function notStarted(reason: string): Running {
  const finished = Promise.resolve({ exitCode: null, reason, stdout: '', stderr: '', truncated: false });
  return {
    pid: undefined,
    stdin: null,
    stdout: null,
    stderr: null,
    finished,
    exit: Promise.resolve(reason),
    stop: () => finished,
    kill: () => {},
    exited: () => true,
  };
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
  const exit = new Promise<string>((resolve) => {
    child.once('exit', (code, sig) => {
      exited = true;
      resolve(sig ? `killed by ${sig}` : `exited with code ${code}`);
      if (!group) return clearTimeout(killTimer);
      // What it left in its group: gone now if it ended by itself; if we stopped it, the rest of the grace to finish
      // (vLLM's engine processes release their memory), then SIGKILL.
      if (reason === null) signalAll('SIGKILL');
      else killTimer?.unref();
      const exitedAt = Date.now();
      setTimeout(() => closeIdlePipes(flow, exitedAt), pipeLingerMs).unref();
    });
  });
  const finished = child.then((r) => {
    exited = true;
    clearTimeout(timer);
    spec.signal?.removeEventListener('abort', onAbort);
    return finishedWith(r, spec, capture, reason);
  });
  return {
    pid: child.pid,
    stdin: child.stdin,
    stdout: child.stdout,
    stderr: child.stderr,
    finished,
    exit: Promise.race([exit, finished.then((r) => r.reason ?? `exited with code ${r.exitCode}`)]),
    exited: () => exited,
    kill: signalAll,
    stop: (why, graceMs) => {
      stop(why, graceMs);
      return finished;
    },
  };
}

/** How a process ended: it could not start, we stopped it (`reason`), a signal killed it, or it exited. */
function finishedWith(
  r: Awaited<ResultPromise>,
  spec: LaunchSpec,
  capture: { stdout: OutputTail | null; stderr: OutputTail | null },
  reason: string | null,
): Finished {
  const hint = r.code === 'ENOENT' ? ' (is it installed and on PATH?)' : '';
  return {
    exitCode: r.exitCode ?? null,
    reason: neverRan(r)
      ? `cannot start ${spec.command}: ${r.code ?? r.originalMessage}${hint}`
      : (reason ?? (r.signal ? `killed by ${r.signal}` : null)),
    stdout: capture.stdout?.text() ?? '',
    stderr: capture.stderr?.text() ?? '',
    truncated: (capture.stdout?.truncated ?? false) || (capture.stderr?.truncated ?? false),
  };
}

type StdioOption = Options['stdout'];

function stdio(sink: Sink | undefined, files: number[]): StdioOption {
  if (sink === undefined || sink === 'ignore') return 'ignore';
  if (sink === 'inherit') return 'inherit';
  if (sink === 'stderr') return process.stderr;
  if (typeof sink === 'object' && 'file' in sink) {
    // The file itself, appended to (a retried rollout's log keeps the first try), not a pipe through us: what the
    // process leaves running writes on without holding its result, and the log outlives alight. execa hands a bare
    // descriptor to the child as it is (its option types do not list one).
    mkdirSync(dirname(sink.file), { recursive: true });
    const fd = openSync(sink.file, 'a');
    files.push(fd);
    return fd as unknown as StdioOption;
  }
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
 * Once a group's leader has exited and the group is killed, a pipe still open is draining (data still coming) or held
 * by a process that left the group (setsid): that one must not hold the result, so a pipe quiet for a moment is
 * closed, and any after a few seconds. The check runs after the loop's I/O phase (setImmediate), so that a stalled
 * loop reads what is waiting in the pipe before it is judged quiet.
 */
function closeIdlePipes(flow: Flow, exitedAt: number): void {
  const seen = flow.lastData;
  setImmediate(() => {
    const open = flow.ours.filter((s) => !s.readableEnded && !s.destroyed);
    if (!open.length) return;
    const quiet = flow.lastData === seen && Date.now() - flow.lastData >= pipeLingerMs;
    if (quiet || Date.now() - exitedAt >= pipeLingerMaxMs) {
      for (const s of open) s.destroy();
      return;
    }
    setTimeout(() => closeIdlePipes(flow, exitedAt), pipeLingerMs).unref();
  });
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
  return {
    exitCode: r.exitCode ?? null,
    stdout: typeof r.stdout === 'string' ? r.stdout : '',
    stderr: typeof r.stderr === 'string' ? r.stderr : '',
    startError: neverRan(r) ? String(r.code ?? r.originalMessage) : null,
  };
}

/** A probe that must succeed: its stdout, else an error naming the command and the end of what it said. */
export function probeOrThrow(command: string, args: string[], o: Parameters<typeof probe>[2] = {}): string {
  const r = probe(command, args, o);
  if (r.exitCode === 0) return r.stdout;
  const said = r.startError ?? (r.stderr || r.stdout).trim().split('\n').slice(-3).join(' ');
  throw new AlightError(`${command} ${args[0]} failed (${r.exitCode ?? 'could not start'}): ${said}`, ExitCode.failure);
}

/** execa's result for a process that never ran (no such command): neither an exit code nor a signal. */
function neverRan(r: { exitCode?: number; signal?: string }): boolean {
  return r.exitCode === undefined && r.signal === undefined;
}
