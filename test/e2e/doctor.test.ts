import { createServer } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { listen } from '../../src/http.js';
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
    expect(missing.stdout).toMatch(
      /to fix:\n {2}- alight doctor --setup \(makes .*venv: torch and the worker's packages from PyPI, ~3 GB\)\n {2}- alight doctor --setup --vllm/,
    );
  });

  it('names what an upstream that is not there lacks, with exit 1 and no stack', async () => {
    // A port that was free a moment ago: nothing listens there.
    const server = createServer();
    const port = await listen(server, '127.0.0.1', 0);
    await new Promise((r) => server.close(r));
    const url = `http://127.0.0.1:${port}/v1`;
    const res = await alight(['doctor', '--upstream', url]);
    expect(res.code).toBe(1);
    expect(res.stdout).toContain(`reachable  FAIL    ${url}: fetch failed`);
    expect(res.stdout).toMatch(/ECONNREFUSED/);
    expect(res.stderr).toBe(`alight: ${url} lacks what training needs (see above)\n`);
    expect(res.stderr).not.toMatch(/\n\s+at /);
  });
});
