import { join } from 'node:path';
import { reloadVllm, startVllm } from '../serve/vllm.js';
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
 * cache, which holds the old weights' keys and values.
 */
export async function vllmServing(o: {
  worker: Worker;
  runDir: string;
  device?: VllmDevice;
  gpuMemoryUtilization?: number;
  timeoutMs: number;
  signal: AbortSignal;
}): Promise<Serving> {
  const device = vllmDevice(o.device);
  const weights = join(o.runDir, 'serving');
  await o.worker.call('save', { path: weights, weights_only: true }, o.timeoutMs);
  // Beside the torch worker on the same GPU, vLLM cannot take its default 92 % of the memory.
  const memory = o.gpuMemoryUtilization ?? (device === 'cuda' ? 0.4 : undefined);
  // float32, as the torch worker trains: vLLM then samples from the numbers the update recomputes (its `auto` would
  // serve a float32 model in bfloat16, and every rollout logprob would be off by bfloat16's rounding).
  const served = await startVllm({
    model: weights,
    device,
    gpuMemoryUtilization: memory,
    dtype: 'float32',
    logFile: join(o.runDir, 'vllm.log'),
    reloadable: true,
    signal: o.signal,
  });
  // vLLM starts on the worker's current weights: the first reset (a fresh run) has nothing to do.
  let startedOnWorker = true;
  const publish = async (worker: Worker, version: number, timeoutMs: number): Promise<void> => {
    startedOnWorker = false;
    await worker.call('sync_weights', { version }, timeoutMs);
    await worker.call('save', { path: weights, weights_only: true }, timeoutMs);
    // Fault injection, for the served-policy check's own test (test/e2e/vllm.test.ts): a sync that silently does
    // nothing, the failure that check exists to catch.
    if (process.env.ALIGHT_FAULT_SKIP_RELOAD !== '1') await reloadVllm(served.url, weights);
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
