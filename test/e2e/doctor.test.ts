import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensurePythonEnv } from '../../src/setup/python-env.js';
import { alight } from '../helpers/cli.js';
import { tempDir } from '../helpers/gateway.js';

describe('alight doctor', () => {
  it('reports the Python side, and for a virtualenv not made yet says exactly what to run', async () => {
    ensurePythonEnv(() => {});
    const ok = await alight(['doctor', '--json']);
    expect(ok.code, ok.stderr).toBe(0);
    const report = JSON.parse(ok.stdout);
    expect(report.fixes).toEqual([]);
    expect(report.packages.find((p: { name: string }) => p.name === 'transformers').version).toBe('4.46.3');
    expect(report.packages.find((p: { name: string }) => p.name === 'torch').version).toMatch(/^\d/);

    const venv = join(tempDir(), 'venv');
    const missing = await alight(['doctor'], { env: { ALIGHT_PYTHON_ENV: venv } });
    expect(missing.code).toBe(0);
    expect(missing.stdout).toContain(`virtualenv: ${venv} (not made yet)`);
    expect(missing.stdout).toMatch(/to fix:\n {2}- alight doctor --setup \(makes .*venv from \S+ and installs python\/requirements.txt\)/);
  });
});
