import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { BIN } from './cli.js';
import { tempDir } from './gateway.js';

export interface RealVllm {
  url: string;
  model: string;
  apiKey: string;
  dir: string;
  stop(): Promise<void>;
}

/**
 * The real vLLM (its CPU build, installed by the suite's set-up) started as a user starts it, `alight serve-vllm MODEL
 * --json`, on a small share of RAM; `stop` sends Ctrl-C's SIGINT and waits for alight to stop it.
 */
export async function startRealVllm(model: string, args: string[] = []): Promise<RealVllm> {
  const dir = tempDir('alight-vllm-');
  const child: ChildProcess = spawn(
    process.execPath,
    [BIN, 'serve-vllm', model, '--json', '--db', join(dir, 'alight.db'), '--gpu-memory-utilization', '0.1', ...args],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const closed = once(child, 'close');
  let json = '';
  for await (const line of createInterface({ input: child.stdout! })) {
    json += line;
    if (line === '}') break;
  }
  if (!json) throw new Error(`serve-vllm ended before it was ready:\n${stderr}\n${readLog(dir)}`);
  const info = JSON.parse(json) as { url: string; model: string; keyFile: string };
  return {
    url: info.url,
    model: info.model,
    apiKey: readFileSync(info.keyFile, 'utf8').trim(),
    dir,
    async stop() {
      child.kill('SIGINT');
      await closed;
    },
  };
}

function readLog(dir: string): string {
  try {
    return readFileSync(join(dir, 'vllm.log'), 'utf8').split('\n').slice(-20).join('\n');
  } catch {
    return '';
  }
}
