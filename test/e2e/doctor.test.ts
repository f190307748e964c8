import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { alight } from '../helpers/cli.js';
import { tempDir } from '../helpers/gateway.js';

describe('alight doctor', () => {
  it('reports the Python environment the set-up made, and for one not made yet says exactly what to run', async () => {
    const ok = await alight(['doctor', '--json']);
    expect(ok.code, ok.stderr).toBe(0);
    const report = JSON.parse(ok.stdout);
    expect(report.fixes).toEqual([]);
    const version = (name: string) => report.packages.find((p: { name: string }) => p.name === name).version;
    expect([version('torch'), version('transformers'), version('vllm')]).toEqual(['2.13.0', '5.19.0', '0.32.0+cpu']);

    const venv = join(tempDir(), 'venv');
    const missing = await alight(['doctor'], { env: { ALIGHT_PYTHON_ENV: venv } });
    expect(missing.code).toBe(0);
    expect(missing.stdout).toContain(`Python environment: ${venv} (not made yet)`);
    expect(missing.stdout).toMatch(/to fix:\n {2}- alight doctor --setup \(makes .*venv: torch and the worker's packages from PyPI, ~3 GB\)\n {2}- alight doctor --setup --vllm/);
  });

  it('names what an upstream that is not vLLM lacks, with exit 1 and no stack', async () => {
    const res = await alight(['doctor', '--upstream', 'http://127.0.0.1:9/v1']);
    expect(res.code).toBe(1);
    expect(res.stdout).toMatch(/reachable\s+FAIL\s+http:\/\/127\.0\.0\.1:9\/v1: fetch failed \(.*ECONNREFUSED/);
    expect(res.stderr).toMatch(/^alight: http:\/\/127\.0\.0\.1:9\/v1 lacks what training needs/);
    expect(res.stderr).not.toMatch(/\n\s+at /);
  });
});
