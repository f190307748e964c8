/** A bench/server.ts process, driven over IPC. */
import { type ChildProcess, fork } from 'node:child_process';
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
