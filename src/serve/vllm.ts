import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, mkdirSync, readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname } from 'node:path';
import { AlightError, ExitCode } from '../errors.js';
import { listen } from '../http.js';
import { createServer } from 'node:http';
import type { ManagedServe } from './managed.js';

export interface VllmOptions {
  python: string; model: string; logFile: string; port?: number; tensorParallel?: number; gpuMemoryUtilization?: number; maxModelLen?: number;
  startupTimeoutS?: number; signal?: AbortSignal;
}

/** A free loopback port (vLLM needs a number, not 0). */
async function freePort(): Promise<number> {
  const server = createServer();
  const port = await listen(server, '127.0.0.1', 0);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * vLLM's OpenAI server as a managed child process (its own process group, log in `logFile`), bound to 127.0.0.1 and
 * guarded by a fresh API key that only alight holds: ready once /health answers; a server that exits first is an
 * error with its log's tail; `stop` ends the whole group (SIGTERM, then SIGKILL after 15 s).
 */
export async function startVllm(o: VllmOptions): Promise<ManagedServe & { apiKey: string }> {
  if (spawnSync(o.python, ['-c', 'import vllm'], { stdio: 'ignore' }).status !== 0) {
    throw new AlightError(`vLLM is not installed for ${o.python}: on a CUDA machine, alight doctor --setup --backend verl installs it (verl[vllm]==0.9.1, vllm 0.24.0)`, ExitCode.failure);
  }
  const port = o.port ?? await freePort();
  const apiKey = randomBytes(24).toString('base64url');
  mkdirSync(dirname(o.logFile), { recursive: true });
  const log = createWriteStream(o.logFile, { flags: 'a' });
  const args = ['-m', 'vllm.entrypoints.openai.api_server', '--model', o.model, '--host', '127.0.0.1', '--port', String(port),
    '--tensor-parallel-size', String(o.tensorParallel ?? 1), ...(o.gpuMemoryUtilization ? ['--gpu-memory-utilization', String(o.gpuMemoryUtilization)] : []),
    ...(o.maxModelLen ? ['--max-model-len', String(o.maxModelLen)] : [])];
  // The key goes by environment (VLLM_API_KEY), not argv: other users' `ps` shows command lines.
  const child = spawn(o.python, args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, VLLM_API_KEY: apiKey } });
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  const closed = once(child, 'close');
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    try { process.kill(-child.pid!, 'SIGTERM'); } catch { /* gone */ }
    const timer = setTimeout(() => { try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* gone */ } }, 15_000);
    await closed;
    clearTimeout(timer);
  };
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + (o.startupTimeoutS ?? 900) * 1000;
  try {
    while (true) {
      if (child.exitCode !== null || child.signalCode !== null) {
        await closed;
        const tail = readFileSync(o.logFile, 'utf8').trim().split('\n').slice(-8).join('\n');
        const hint = /Failed to infer device type|No CUDA GPUs|CUDA driver/.test(tail) ? ' (it found no GPU it can use)' : '';
        throw new AlightError(`vLLM exited (${child.exitCode ?? child.signalCode}) before it was ready${hint}; the end of ${o.logFile}:\n${tail}`, ExitCode.failure);
      }
      if (o.signal?.aborted) throw new AlightError('interrupted while vLLM was starting', ExitCode.interrupted);
      if (Date.now() > deadline) throw new AlightError(`vLLM did not answer ${url}/health within ${o.startupTimeoutS ?? 900} s (log: ${o.logFile})`, ExitCode.failure);
      if (await fetch(`${url}/health`).then((r) => r.ok, () => false)) break;
      await new Promise((r) => setTimeout(r, 1000));
    }
  } catch (err) {
    await stop();
    throw err;
  }
  const models = await (await fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${apiKey}` } })).json() as { data: { id: string }[] };
  return { url: `${url}/v1`, model: models.data[0].id, apiKey, stop };
}
