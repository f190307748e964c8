import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { loadVllmAdapter, reloadVllm, startVllm } from '../serve/vllm.js';
import { type VllmDevice, vllmDevice } from '../setup/vllm-env.js';
import type { Worker } from '../worker/client.js';

/** Who serves the policy to the harnesses while it trains, and how each update's weights reach it. */
export interface Serving {
  /** The API key the gateway sends upstream (a vLLM alight started), if any. */
  apiKey?: string;
  /** The endpoints the gateway routes calls to, given the worker's own. */
  endpoints(worker: { url: string; model: string }[]): { url: string; model: string }[];
  /** Serves weights `version`, which the worker holds after its update (or a checkpoint load). */
  publish(worker: Worker, version: number, timeoutMs: number): Promise<void>;
  /**
   * Serves a (re)started worker's initial weights when there is no checkpoint to load (an engine of its own keeps older
   * ones).
   */
  reset?(worker: Worker, timeoutMs: number): Promise<void>;
  stop(): Promise<void>;
}

/** The worker serves what it trains (the torch worker's server, verl's vLLM servers). */
export const workerServing: Serving = {
  endpoints: (worker) => worker,
  publish: async (worker, version, timeoutMs) => {
    await worker.call('sync_weights', { version }, timeoutMs);
  },
  stop: async () => {},
};

/**
 * vLLM serves the torch worker's policy from the run's `serving/` folder, which the worker writes (untied: see
 * save_for_serving) before vLLM starts and after each update; vLLM then reloads it in place and drops its prefix
 * cache, which holds the old weights' keys and values. Under LoRA (`base`: the base model's folder) vLLM serves the
 * base with the worker's adapter, hot-swapped after each update (adapterServing).
 */
export async function vllmServing(o: {
  worker: Worker;
  runDir: string;
  base: string | null;
  device?: VllmDevice;
  gpuMemoryUtilization?: number;
  timeoutMs: number;
  signal: AbortSignal;
}): Promise<Serving> {
  const device = vllmDevice(o.device);
  const adapter = o.base !== null;
  const weights = join(o.runDir, 'serving', adapter ? 'adapter-0' : '');
  await o.worker.call('save', { path: weights, weights_only: true }, o.timeoutMs);
  const served = await startVllm({
    model: o.base ?? weights,
    device,
    // Beside the torch worker on the same GPU, vLLM cannot take its default 92 % of the memory.
    gpuMemoryUtilization: o.gpuMemoryUtilization ?? (device === 'cuda' ? 0.4 : undefined),
    // float32, as the torch worker trains: vLLM then samples from the numbers the update recomputes (its `auto` would
    // serve a float32 model in bfloat16, and every rollout logprob would be off by bfloat16's rounding).
    dtype: 'float32',
    logFile: join(o.runDir, 'vllm.log'),
    reloadable: true,
    ...(adapter && { lora: { name: servedAdapterName, adapter: weights, rank: adapterRank(weights) } }),
    signal: o.signal,
  });
  const push = adapter ? adapterPush(o.runDir, served) : fullWeightsPush(weights, served.url);
  // vLLM starts on the worker's current weights: the first reset (a fresh run) has nothing to do.
  let startedOnWorker = true;
  const publish = async (worker: Worker, version: number, timeoutMs: number): Promise<void> => {
    startedOnWorker = false;
    await worker.call('sync_weights', { version }, timeoutMs);
    await push(worker, version, timeoutMs);
  };
  return {
    apiKey: served.apiKey,
    endpoints: () => [{ url: served.url, model: served.model }],
    publish,
    reset: async (worker, timeoutMs) => {
      if (!startedOnWorker) await publish(worker, 0, timeoutMs);
      startedOnWorker = false;
    },
    stop: () => served.stop(),
  };
}

type Push = (worker: Worker, version: number, timeoutMs: number) => Promise<void>;

// Fault injection, for the served-policy check's own tests (test/e2e/vllm.test.ts): from the version it names on, a
// sync that silently does nothing, the failure that check exists to catch. A later version than 1 lets one run show
// both: the syncs before it checked and passing, then the first one that does nothing caught.
const skipReload = (version: number): boolean => {
  const from = Number(process.env.ALIGHT_FAULT_SKIP_RELOAD);
  return from > 0 && version >= from;
};

function fullWeightsPush(weights: string, url: string): Push {
  return async (worker, version, timeoutMs) => {
    await worker.call('save', { path: weights, weights_only: true }, timeoutMs);
    if (!skipReload(version)) await reloadVllm(url, weights);
  };
}

/** The name vLLM serves the trained adapter under, one for the whole run: the gateway pins every call to it. */
export const servedAdapterName = 'alight-policy';

/**
 * Each version's adapter in a folder of its own (vLLM warns that an in-place load from the same path can reuse prefix
 * blocks of the old one; the worker never writes a folder vLLM may be reading), loaded in place; the one before is
 * removed once the new one serves.
 */
function adapterPush(runDir: string, served: { url: string; apiKey: string }): Push {
  let previous = join(runDir, 'serving', 'adapter-0');
  return async (worker, version, timeoutMs) => {
    const folder = join(runDir, 'serving', `adapter-${version}-${Date.now()}`);
    await worker.call('save', { path: folder, weights_only: true }, timeoutMs);
    if (skipReload(version)) return;
    await loadVllmAdapter(served, servedAdapterName, folder);
    rmSync(previous, { recursive: true, force: true });
    previous = folder;
  };
}

/** The rank PEFT wrote in the adapter's config (`--lora-from` may continue an adapter of any rank). */
const adapterRank = (folder: string): number =>
  (JSON.parse(readFileSync(join(folder, 'adapter_config.json'), 'utf8')) as { r: number }).r;
