import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { AlightError, ExitCode } from '../errors.js';
import { packageRoot } from '../package-root.js';

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
  const child = spawn(process.execPath, [bin, 'serve', '--model', model, '--port', '0', '--json', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...env, ALIGHT_SERVE_MANAGED: '1' },
  });
  const closed = once(child, 'close');
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (s: string) => {
    stderr = (stderr + s).slice(-4000);
  });
  let out = '';
  for await (const chunk of child.stdout) {
    out += chunk;
    if (out.trim().endsWith('}')) break;
  }
  let info: { url: string; model: string };
  try {
    info = JSON.parse(out);
  } catch {
    await closed;
    throw new AlightError(`alight serve did not start:\n${stderr.trim() || out.trim()}`, ExitCode.input);
  }
  child.stderr.pipe(process.stderr);
  return {
    url: info.url,
    model: info.model,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await closed;
      clearTimeout(timer);
    },
  };
}
