import { randomBytes } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { AlightError, ExitCode } from '../errors.js';
import { packageRoot } from '../package-root.js';
import { type Running, start } from '../process/launch.js';
import {
  abortReason,
  killGraceMs,
  localEnv,
  localLauncher,
  type ProcessResult,
  type ProcessSpec,
  type RunLauncher,
  rewardAfter,
} from './launcher.js';

/**
 * `runner: pool`: Node harnesses on this machine, each rollout an episode of a warm host (bin/harness-host.mjs) that
 * evaluates the harness's module anew with the rollout's environment, argv, folder and log files, so that what the
 * harness imports loads once per host rather than once per rollout (an agent SDK takes ~0.5 s of CPU to load; 64 at
 * once held a step's first request back ~30 s on two cores: bench/BENCHMARKS.md). Hosts start on demand, up to the
 * run's concurrency, and are kept while their episodes end cleanly; one whose episode left work running, threw, timed
 * out or was stopped is ended (with everything it started, its process group) and a fresh one takes its place.
 */
export function startPoolLauncher(): RunLauncher {
  const idle: Host[] = [];
  const hosts = new Set<Host>();
  return {
    name: 'pool',
    gatewayHost: null,
    async run(spec) {
      const files = typeof spec.output === 'string' ? null : spec.output;
      // A lone harness on the terminal gains nothing from a warm host: it runs as a process of its own.
      if (files === null) return localLauncher.run(spec);
      const file = harnessModule(spec);
      for (const log of [files.stdout, files.stderr]) mkdirSync(dirname(log), { recursive: true });
      const host = takeIdle(idle) ?? startHost(spec, hosts);
      const result = await episode(host, file, spec, files);
      host.episodes++;
      if (host.alive && host.episodes < episodesPerHost) idle.push(host);
      else host.process.stdin?.end();
      return { ...result, reward: await rewardAfter(spec, result, files) };
    },
    async close() {
      await Promise.all([...hosts].map((h) => h.process.stop('the run ended', 0)));
    },
  };
}

// Each episode's module stays in its host's module map (with what its top-level bindings hold): a host is retired after
// this many, which bounds that and still loads the imports once per 100 rollouts.
const episodesPerHost = 100;

interface Host {
  process: Running;
  nonce: string;
  alive: boolean;
  episodes: number;
  /** The episode running on it: its stdout file (lines the harness wrote to fd 1 itself), and how to end it. */
  current: { stdout: string; end: (end: { code: number; recycle: boolean }) => void } | null;
}

const hostScript = join(packageRoot, 'bin', 'harness-host.mjs');

/** A host with this run's environment (alight's variables come with each episode; the withheld ones never). */
function startHost(spec: ProcessSpec, hosts: Set<Host>): Host {
  const nonce = randomBytes(16).toString('hex');
  const env = localEnv({ env: {}, withhold: spec.withhold });
  const host: Host = { nonce, alive: true, episodes: 0, current: null, process: undefined as unknown as Running };
  host.process = start({
    command: process.execPath,
    args: [hostScript],
    env: { ...env, ALIGHT_HOST_NONCE: nonce },
    stdin: 'pipe',
    stdout: { lines: (line) => heard(host, line) },
    stderr: { tail: 4096 },
    group: true,
    killGraceMs,
  });
  hosts.add(host);
  // A host that died between episodes is found dead when next taken; writing to its closed stdin must not throw.
  host.process.stdin?.on('error', () => {});
  // The run's close stops what is still in the set: a host leaves it once it has exited.
  host.process.exit.then(() => {
    host.alive = false;
    hosts.delete(host);
  });
  return host;
}

/** An idle host still alive (one that died idle is dropped). */
function takeIdle(idle: Host[]): Host | undefined {
  for (let host = idle.pop(); host; host = idle.pop()) if (host.alive) return host;
  return undefined;
}

/** A line from the host: an episode's end (with the host's nonce), else the harness's own output to fd 1. */
function heard(host: Host, line: string): void {
  if (line.startsWith(`${host.nonce} `)) {
    const end = JSON.parse(line.slice(host.nonce.length + 1)) as { code: number; recycle: boolean };
    if (end.recycle) host.alive = false;
    host.current?.end(end);
  } else if (host.current) appendFileSync(host.current.stdout, `${line}\n`);
}

/** One rollout on `host`: its end as a process's would be (an exit code, or why it was stopped). */
async function episode(
  host: Host,
  file: string,
  spec: ProcessSpec,
  files: { stdout: string; stderr: string },
): Promise<ProcessResult> {
  const ended = new Promise<{ code: number; recycle: boolean }>((resolve) => {
    host.current = { stdout: files.stdout, end: resolve };
  });
  const stop = (why: string) => {
    host.alive = false;
    void host.process.stop(why);
  };
  const onAbort = () => stop(abortReason(spec.signal));
  spec.signal.addEventListener('abort', onAbort, { once: true });
  const timer = spec.timeoutMs === null ? undefined : setTimeout(() => stop('timeout'), spec.timeoutMs);
  try {
    if (spec.signal.aborted) return { exitCode: null, reason: abortReason(spec.signal) };
    const job = { id: spec.rollout?.id ?? randomBytes(6).toString('hex'), file, args: spec.args.slice(1) };
    host.process.stdin?.write(`${JSON.stringify({ ...job, env: spec.env, cwd: spec.cwd, ...files })}\n`);
    const outcome = await Promise.race([ended, host.process.finished]);
    if ('code' in outcome) return { exitCode: outcome.code, reason: null };
    const said = outcome.stderr.trim().split('\n').at(-1);
    return { exitCode: outcome.exitCode, reason: outcome.reason ?? `the harness host ended${said ? `: ${said}` : ''}` };
  } finally {
    host.current = null;
    clearTimeout(timer);
    spec.signal.removeEventListener('abort', onAbort);
  }
}

/**
 * The harness's module file, or a clear error: the pool runs `node <file>` harnesses written as ES modules (an
 * episode is the module evaluated anew; a CommonJS file is evaluated once per process).
 */
export function harnessModule(spec: ProcessSpec): string {
  const node = spec.command === process.execPath || basename(spec.command) === 'node';
  const script = spec.args[0];
  if (!node || !script || script.startsWith('-'))
    throw new AlightError(
      `runner pool runs Node harnesses given as \`node <file.mjs> [args]\`; this one is \`${[spec.command, ...spec.args.slice(0, 2)].join(' ')}\` (use runner local)`,
      ExitCode.usage,
    );
  const file = resolve(spec.cwd ?? process.cwd(), script);
  if (!existsSync(file)) throw new AlightError(`runner pool: no harness file ${file}`, ExitCode.usage);
  if (!isModule(file))
    throw new AlightError(
      `runner pool runs ES-module harnesses (.mjs, or .js under a package.json with "type": "module"); ${file} is CommonJS (use runner local)`,
      ExitCode.usage,
    );
  return file;
}

/** Whether Node loads `file` as an ES module: by its extension, else by the nearest package.json's `type`. */
function isModule(file: string): boolean {
  const ext = extname(file);
  if (ext === '.mjs') return true;
  if (ext !== '.js') return false;
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg)) return (JSON.parse(readFileSync(pkg, 'utf8')) as { type?: string }).type === 'module';
    if (dirname(dir) === dir) return false;
  }
}
