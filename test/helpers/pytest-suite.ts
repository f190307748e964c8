import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/package-root.js';

/**
 * A pytest folder inside the one test command: collected when the file loads, run once, each test reported as a
 * vitest test of its own (a skip or a failure fails it). A module that yields no test (one that skips itself as it
 * is imported, or fails to) fails a test named after it, rather than leaving no trace.
 */
export function pytestSuite(python: string, folder: string, env: NodeJS.ProcessEnv = {}): void {
  const pytest = (args: string[]) =>
    spawnSync(python, ['-m', 'pytest', folder, '-p', 'no:cacheprovider', ...args], {
      cwd: packageRoot,
      encoding: 'utf8',
      maxBuffer: 64 << 20,
      env: { ...process.env, ...env },
    });
  const collected = pytest(['--collect-only', '-q'])
    .stdout.split('\n')
    .filter((l) => l.includes('::'));
  const outcomes = new Map<string, string>();
  let output = '';
  beforeAll(() => {
    const res = pytest(['-q', '-rA']);
    output = `${res.stdout}\n${res.stderr}`;
    // A parametrised id may hold spaces, so each line is matched against the ids collected, not split at a space.
    const lines = [...output.matchAll(/^(PASSED|FAILED|ERROR|SKIPPED) (.*)$/gm)];
    for (const id of collected)
      for (const [, status, rest] of lines)
        if (rest === id || rest.startsWith(`${id} - `)) outcomes.set(id, `${status}${rest.slice(id.length)}`);
  }, 600_000);
  describe(folder, () => {
    it('collects the Python tests', () => expect(collected.length).toBeGreaterThan(0));
    for (const module of readdirSync(join(packageRoot, folder)).filter((f) => /^test_.*\.py$/.test(f)))
      it(`${module} yields tests`, () =>
        expect(collected.filter((id) => id.startsWith(`${folder}/${module}::`)).length).toBeGreaterThan(0));
    for (const id of collected) it(id, () => expect(outcomes.get(id), output.slice(-4000)).toBe('PASSED'));
  });
}
