import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname } from 'node:path';
import { AlightError, ExitCode } from '../errors.js';
import { listen } from '../http.js';
import { type Running, start } from '../process/launch.js';
import { asLines, type SetupListener } from '../setup/events.js';
import { cudaGpus } from '../setup/verl-env.js';
import { ensureVllm, type VllmDevice, vllmDevice } from '../setup/vllm-env.js';
import type { ManagedServe } from './managed.js';

export interface VllmOptions {
  model: string;
  logFile: string;
  device?: VllmDevice;
  port?: number;
  tensorParallel?: number;
  gpuMemoryUtilization?: number;
  maxModelLen?: number;
  toolCallParser?: string;
  startupTimeoutS?: number;
  signal?: AbortSignal;
  listener?: SetupListener;
  /** vLLM's --dtype; its `auto` serves a float32 model in bfloat16 (CPU) or float16 (GPU). */
  dtype?: string;
  /** Weights can be reloaded in place (reloadVllm): vLLM's dev-mode routes, which its API key does not guard. */
  reloadable?: boolean;
  /**
   * Serve this LoRA adapter on the base `model`, under `name` (the served model's name), reloadable in place
   * (loadVllmAdapter); `rank` is the adapter's.
   */
  lora?: { name: string; adapter: string; rank: number };
}

/** The adapter ranks vLLM accepts as --max-lora-rank (vllm/config/lora.py, MaxLoRARanks). */
const vllmLoraRanks = [1, 8, 16, 32, 64, 128, 256, 320, 512];

/** The smallest --max-lora-rank that holds an adapter of `rank`; null above vLLM's largest. */
export const vllmMaxLoraRank = (rank: number): number | null => vllmLoraRanks.find((r) => r >= rank) ?? null;

/**
 * vLLM's command line as alight runs it. Training needs the logprobs of the distribution the tokens were sampled from
 * (after temperature, top-k, top-p): vLLM's default reports the raw model's. On CPU, --gpu-memory-utilization is the
 * share of RAM vLLM reserves (KV cache included): alight asks for a fifth unless told, not vLLM's 92 %.
 */
export function vllmArgs(o: VllmOptions, device: VllmDevice, port: number): string[] {
  const memory = o.gpuMemoryUtilization ?? (device === 'cpu' ? 0.2 : undefined);
  return [
    '-m',
    'vllm.entrypoints.openai.api_server',
    '--model',
    o.model,
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    '--logprobs-mode',
    'processed_logprobs',
    '--enable-auto-tool-choice',
    '--tool-call-parser',
    o.toolCallParser ?? 'hermes',
    '--tensor-parallel-size',
    String(o.tensorParallel ?? 1),
    ...(memory ? ['--gpu-memory-utilization', String(memory)] : []),
    ...(o.maxModelLen ? ['--max-model-len', String(o.maxModelLen)] : []),
    ...(o.dtype ? ['--dtype', o.dtype] : []),
    ...(o.lora ? loraArgs(o.lora) : []),
  ];
}

function loraArgs(lora: NonNullable<VllmOptions['lora']>): string[] {
  const rank = vllmMaxLoraRank(lora.rank);
  if (rank === null)
    throw new AlightError(
      `LoRA rank ${lora.rank} is above the largest vLLM serves (${vllmLoraRanks.at(-1)})`,
      ExitCode.usage,
    );
  return [
    '--enable-lora',
    '--max-loras',
    '1',
    '--max-lora-rank',
    String(rank),
    '--lora-modules',
    `${lora.name}=${lora.adapter}`,
  ];
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
  const device = vllmDevice(o.device);
  // The verl virtualenv holds vLLM's CPU build on such a machine: it would start, on the CPU, and say nothing.
  if (device === 'cuda' && cudaGpus() === 0)
    throw new AlightError(
      "--device cuda, but nvidia-smi lists no CUDA GPU here: --device cpu runs vLLM's CPU build",
      ExitCode.usage,
    );
  const python = await ensureVllm(device, o.listener ?? asLines((line) => process.stderr.write(`alight: ${line}\n`)));
  const port = o.port ?? (await freePort());
  const apiKey = randomBytes(24).toString('base64url');
  mkdirSync(dirname(o.logFile), { recursive: true });
  const vllm = start({
    command: python,
    args: vllmArgs(o, device, port),
    // The key goes by environment (VLLM_API_KEY), not argv: other users' `ps` shows command lines.
    env: {
      ...process.env,
      VLLM_API_KEY: apiKey,
      ...(device === 'cpu' && { VLLM_TARGET_DEVICE: 'cpu' }),
      ...(o.reloadable && { VLLM_SERVER_DEV_MODE: '1' }),
      // /v1/load_lora_adapter, which loadVllmAdapter calls after each update, exists only with this set.
      ...(o.lora && { VLLM_ALLOW_RUNTIME_LORA_UPDATING: 'True' }),
    },
    stdout: { file: o.logFile },
    stderr: 'stdout',
    group: true,
  });
  const stop = async (): Promise<void> => {
    await vllm.stop('stopped', stopGraceMs);
  };
  const url = `http://127.0.0.1:${port}`;
  try {
    await untilHealthy(vllm, url, o);
  } catch (err) {
    await stop();
    throw err;
  }
  const models = (await (
    await fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${apiKey}` } })
  ).json()) as { data: { id: string }[] };
  // With an adapter, its name is the served model: a call naming the base would sample without the adapter.
  return { url: `${url}/v1`, model: o.lora?.name ?? models.data[0].id, apiKey, stop };
}

// vLLM gets this long to release its GPU memory after SIGTERM.
const stopGraceMs = 15_000;

/** Waits for /health; a vLLM that exits first is an error with its log's tail and a hint at the usual causes. */
async function untilHealthy(vllm: Running, url: string, o: VllmOptions): Promise<void> {
  const deadline = Date.now() + (o.startupTimeoutS ?? 900) * 1000;
  while (true) {
    if (vllm.exited()) {
      const ended = await vllm.finished;
      const log = readFileSync(o.logFile, 'utf8');
      const tail = log.trim().split('\n').slice(-8).join('\n');
      // The cause is often above the tail (vLLM's engine process logs it, then the server's traceback follows).
      const hint = /Failed to infer device type|No CUDA GPUs|CUDA driver/.test(log)
        ? " (it found no GPU it can use; --device cpu runs vLLM's CPU build)"
        : /less than desired CPU memory utilization/.test(log)
          ? ' (not enough free memory: pass a smaller --gpu-memory-utilization)'
          : '';
      throw new AlightError(
        `vLLM exited (${ended.exitCode ?? ended.reason}) before it was ready${hint}; ` +
          `the end of ${o.logFile}:\n${tail}`,
        ExitCode.failure,
      );
    }
    if (o.signal?.aborted) throw new AlightError('interrupted while vLLM was starting', ExitCode.interrupted);
    if (Date.now() > deadline)
      throw new AlightError(
        `vLLM did not answer ${url}/health within ${o.startupTimeoutS ?? 900} s (log: ${o.logFile})`,
        ExitCode.failure,
      );
    const healthy = await fetch(`${url}/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (healthy) return;
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/**
 * Loads the Hugging Face weights in `folder` into a running vLLM (started `reloadable`) in place, then drops its
 * prefix cache: cached keys and values were computed with the old weights.
 */
export async function reloadVllm(url: string, folder: string): Promise<void> {
  await postAll(url, [
    ['/collective_rpc', { method: 'reload_weights', kwargs: { weights_path: folder } }],
    ['/reset_prefix_cache', null],
  ]);
}

/**
 * Replaces the adapter served as `name` with the one in `folder`, in place (the same name and LoRA id: calls keep
 * naming it), then drops the prefix cache, whose blocks of that id were computed under the old adapter (vLLM keeps
 * them on an in-place load).
 */
export async function loadVllmAdapter(served: { url: string; apiKey: string }, name: string, folder: string) {
  await postAll(
    served.url,
    [
      ['/v1/load_lora_adapter', { lora_name: name, lora_path: folder, load_inplace: true }],
      ['/reset_prefix_cache', null],
    ],
    served.apiKey,
  );
}

async function postAll(url: string, calls: [string, unknown][], apiKey?: string): Promise<void> {
  const root = url.replace(/\/v1\/?$/, '');
  for (const [path, body] of calls) {
    const res = await fetch(`${root}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(apiKey && { authorization: `Bearer ${apiKey}` }) },
      body: body === null ? null : JSON.stringify(body),
      signal: AbortSignal.timeout(600_000),
    });
    if (!res.ok)
      throw new AlightError(
        `vLLM refused ${path} (HTTP ${res.status}): ${(await res.text()).slice(0, 300)}`,
        ExitCode.failure,
      );
  }
}
