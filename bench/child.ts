/** A bench/server.ts process, driven over IPC. */
import { type ChildProcess, execFileSync, fork } from 'node:child_process';
import { cpus } from 'node:os';
import type { ToChild, ToParent, Usage } from './server.js';

const children = new Set<ChildProcess>();

export class Child {
  private constructor(
    private readonly proc: ChildProcess,
    readonly url: string,
  ) {}

  static async start(args: string[], execArgv: string[] = []): Promise<Child> {
    const proc = fork(new URL('./server.ts', import.meta.url), args, {
      execArgv: ['--import', 'tsx', ...execArgv],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    children.add(proc);
    proc.once('exit', () => children.delete(proc));
    const ready = await next(proc, 'ready');
    return new Child(proc, ready.url);
  }

  /** Pins the process (see `pin`). */
  pin(role: Role): void {
    if (this.proc.pid) pin(this.proc.pid, role);
  }

  static killAll(): void {
    for (const proc of children) proc.kill('SIGKILL');
  }

  async ask<T extends ToChild['type']>(
    message: Extract<ToChild, { type: T }>,
  ): Promise<Extract<ToParent, { type: T }>> {
    const answer = next(this.proc, message.type);
    this.proc.send(message);
    return answer;
  }

  async usage(): Promise<Usage> {
    return (await this.ask({ type: 'usage' })).usage;
  }

  async stop(): Promise<number | null> {
    const exited = new Promise((r) => this.proc.once('exit', r));
    const { dbBytes } = await this.ask({ type: 'stop' });
    await exited;
    return dbBytes;
  }
}

function next<T extends ToParent['type']>(proc: ChildProcess, type: T): Promise<Extract<ToParent, { type: T }>> {
  return new Promise((resolve, reject) => {
    const onMessage = (m: ToParent): void => {
      if (m.type !== type) return;
      proc.off('message', onMessage).off('exit', onExit);
      resolve(m as Extract<ToParent, { type: T }>);
    };
    const onExit = (code: number | null): void =>
      reject(new Error(`bench server exited (${code}) before answering ${type}`));
    proc.on('message', onMessage).once('exit', onExit);
  });
}

type Role = 'server' | 'load';

/**
 * BENCH_PIN=1: the server under test on the last core, the load generator and the upstream on the others (every
 * thread, with taskset). Unpinned, on a 2-core machine three busy processes take turns on two cores and each wake-up
 * finds its caches cold; a gateway on a server has a core of its own.
 */
export function pin(pid: number, role: Role): void {
  const last = cpus().length - 1;
  if (process.env.BENCH_PIN !== '1' || last < 1) return;
  execFileSync('taskset', ['-a', '-pc', role === 'server' ? `${last}` : `0-${last - 1}`, `${pid}`], {
    stdio: 'ignore',
  });
}
