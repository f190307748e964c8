import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { AlightError, ExitCode } from '../errors.js';

export interface ManagedServe {
  /** The OpenAI base URL, ending in /v1. */
  url: string;
  stop(): Promise<void>;
}

// dist/src/serve/managed.js → the package's bin/alight.js
const bin = fileURLToPath(new URL('../../../bin/alight.js', import.meta.url));

/** `alight serve` as a child process on a free port, for `record --serve`; ready once it has loaded the model. */
export async function startManagedServe(model: string, args: string[] = []): Promise<ManagedServe> {
  const child = spawn(process.execPath, [bin, 'serve', '--model', model, '--port', '0', '--json', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const closed = once(child, 'close');
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (s: string) => { stderr = (stderr + s).slice(-4000); });
  let out = '';
  for await (const chunk of child.stdout) {
    out += chunk;
    if (out.trim().endsWith('}')) break;
  }
  let url: string;
  try {
    url = JSON.parse(out).url;
  } catch {
    await closed;
    throw new AlightError(`alight serve did not start:\n${stderr.trim() || out.trim()}`, ExitCode.input);
  }
  child.stderr.pipe(process.stderr);
  return {
    url,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await closed;
      clearTimeout(timer);
    },
  };
}
