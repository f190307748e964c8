import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { z } from 'zod';
import { AlightError, ExitCode } from '../errors.js';
import { type Running, start } from '../process/launch.js';
import { PYTHON_DIR } from '../setup/python-env.js';

export interface WorkerOptions {
  python: string;
  /** The worker's stderr (its log) is appended here. */
  logFile: string;
  env?: NodeJS.ProcessEnv;
}

/** Replies of the protocol's methods (docs/design.md#worker-protocol), checked at the boundary. */
export const replies = {
  init: z.object({
    endpoints: z.array(z.object({ url: z.string().url(), model: z.string() })).min(1),
    version: z.number().int(),
  }),
  train_step: z.object({ metrics: z.record(z.string(), z.number().nullable()) }),
  sync_weights: z.object({ version: z.number().int() }),
  save: z.object({ path: z.string() }),
  load: z.object({ path: z.string(), version: z.number().int() }),
  score: z.object({ logprobs: z.array(z.number()), version: z.number().int() }),
  eval_loss: z.object({ loss: z.number(), loss_tokens: z.number().int() }),
  shutdown: z.object({}),
};
export type Method = keyof typeof replies;

interface Pending {
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
  method: Method;
}

/**
 * The Python worker as a child process speaking newline-delimited JSON-RPC on stdin/stdout. Every call has a
 * timeout; a worker that exits fails its pending calls with its exit status and the end of its log. It runs in a
 * process group of its own, so `kill()` ends anything it started; it also exits by itself when its stdin closes.
 */
export class Worker {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private exited: string | null = null;
  readonly exit: Promise<string>;

  private constructor(
    private readonly child: Running,
    private readonly logFile: string,
  ) {
    this.exit = new Promise((resolve) => {
      const ended = (how: string): void => {
        if (this.exited) return;
        this.exited = how;
        const why = `the Python worker ${this.exited}${this.logTail()}`;
        for (const [id, p] of this.pending) {
          clearTimeout(p.timer);
          p.reject(new AlightError(`${p.method} failed: ${why}`, ExitCode.failure));
          this.pending.delete(id);
        }
        resolve(how);
      };
      // As soon as the worker itself ends (what it started may hold its stdout a while longer); a failed start (no
      // such python) ends it too, with `cannot start …`.
      void child.exit.then(ended);
    });
    createInterface({ input: child.stdout! }).on('line', (line) => this.onLine(line));
  }

  static start(options: WorkerOptions): Worker {
    const child = start({
      command: options.python,
      args: ['-u', '-m', 'alight_worker'],
      cwd: PYTHON_DIR,
      env: { ...process.env, ...options.env, PYTHONPATH: PYTHON_DIR },
      stdin: 'pipe',
      stdout: 'pipe',
      stderr: { file: options.logFile },
      group: true,
    });
    child.stdin!.on('error', () => {}); // a dead worker is reported by its exit, not by a write error
    return new Worker(child, options.logFile);
  }

  /** How the worker ended (`killed by SIGKILL`, `exited with code 1`); null while it runs. */
  get ended(): string | null {
    return this.exited;
  }

  call<M extends Method>(
    method: M,
    params: Record<string, unknown>,
    timeoutMs: number,
  ): Promise<z.infer<(typeof replies)[M]>> {
    if (this.exited)
      return Promise.reject(
        new AlightError(`${method} failed: the Python worker ${this.exited}${this.logTail()}`, ExitCode.failure),
      );
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(
          new AlightError(
            `${method} got no answer from the Python worker in ${Math.round(timeoutMs / 1000)} s${this.logTail()}`,
            ExitCode.failure,
          ),
        );
      }, timeoutMs);
      this.pending.set(id, {
        method,
        timer,
        reject,
        resolve: (value) => {
          const parsed = replies[method].safeParse(value);
          if (parsed.success) resolve(parsed.data as z.infer<(typeof replies)[M]>);
          else
            reject(
              new AlightError(
                `the Python worker's ${method} reply is malformed: ${parsed.error.message}`,
                ExitCode.failure,
              ),
            );
        },
      });
      this.child.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  }

  /**
   * Asks the worker to shut down, then makes sure: SIGTERM to its group after `graceMs`, SIGKILL after as long again.
   */
  async stop(graceMs = 5000): Promise<void> {
    if (this.exited) return;
    const ended = this.exit.then(() => true);
    this.call('shutdown', {}, graceMs).catch(() => {});
    this.child.stdin!.end();
    if (await Promise.race([ended, sleep(graceMs).then(() => false)])) return;
    this.kill('SIGTERM');
    if (await Promise.race([ended, sleep(graceMs).then(() => false)])) return;
    this.kill('SIGKILL');
    await ended;
  }

  kill(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }

  private onLine(line: string): void {
    let message: { id?: number; result?: unknown; error?: { message: string } } | null;
    try {
      message = JSON.parse(line);
    } catch {
      return; // not the protocol: the worker logs to stderr, but a library may print to stdout
    }
    if (typeof message !== 'object' || message === null) return;
    const p = message.id === undefined ? undefined : this.pending.get(message.id);
    if (!p) return;
    clearTimeout(p.timer);
    this.pending.delete(message.id!);
    if (message.error)
      p.reject(
        new AlightError(
          `the Python worker's ${p.method} failed: ${message.error.message} (log: ${this.logFile})`,
          ExitCode.failure,
        ),
      );
    else p.resolve(message.result);
  }

  private logTail(): string {
    try {
      const lines = readFileSync(this.logFile, 'utf8').trim().split('\n').slice(-6);
      return lines.length && lines[0] ? `; the end of its log (${this.logFile}):\n  ${lines.join('\n  ')}` : '';
    } catch {
      return '';
    }
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms).unref());
