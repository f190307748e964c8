import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { AlightError, ExitCode } from '../errors.js';
import { packageRoot } from '../package-root.js';
import { start } from '../process/launch.js';

export interface ManagedServe {
  /** The OpenAI base URL, ending in /v1. */
  url: string;
  /** The model name it serves (and answers 404 for any other). */
  model: string;
  stop(): Promise<void>;
}

// The package's bin/alight.js, from dist/src/serve/ when built or from src/serve/ when run from source.
const bin = join(packageRoot, 'bin', 'alight.js');

/** `alight serve` as a child process on a free port, for `record --serve`; ready once it has loaded the model. */
export async function startManagedServe(
  model: string,
  args: string[] = [],
  env: NodeJS.ProcessEnv = process.env,
): Promise<ManagedServe> {
  // ALIGHT_SERVE_MANAGED: the terminal's Ctrl-C is for the parent, which stops this child last, after the harnesses.
  const child = start({
    command: process.execPath,
    args: [bin, 'serve', '--model', model, '--port', '0', '--json', ...args],
    env: { ...env, ALIGHT_SERVE_MANAGED: '1' },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (s: string) => {
    stderr = (stderr + s).slice(-4000);
  });
  const out = await firstObject(child.stdout);
  let info: { url: string; model: string };
  try {
    info = JSON.parse(out);
  } catch {
    const ended = await child.finished;
    const why = stderr.trim() || out.trim() || (ended.reason ?? `exit code ${ended.exitCode}`);
    throw new AlightError(`alight serve did not start:\n${why}`, ExitCode.input);
  }
  child.stderr?.pipe(process.stderr);
  return {
    url: info.url,
    model: info.model,
    async stop() {
      await child.stop('stopped', 10_000);
    },
  };
}

/** What the child prints up to its first closing brace: `serve --json`'s ready line. The rest is drained, unread. */
function firstObject(stdout: Readable | null): Promise<string> {
  return new Promise((resolve) => {
    if (!stdout) return resolve('');
    let out = '';
    const onData = (chunk: Buffer): void => {
      out += chunk.toString('utf8');
      if (!out.trim().endsWith('}')) return;
      stdout.off('data', onData).off('end', onEnd);
      stdout.resume();
      resolve(out);
    };
    const onEnd = (): void => resolve(out);
    stdout.on('data', onData).on('end', onEnd);
  });
}
