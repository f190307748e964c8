import { execFileSync, spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/package-root.js';
import { envPython } from '../../src/setup/python-env.js';
import { pytestSuite } from '../helpers/pytest-suite.js';
import { swebenchPython } from '../helpers/swebench-python.js';

// python/tests (pytest) in the torch worker's virtualenv.
const python = envPython();
if (spawnSync(python, ['-c', 'import verl'], { stdio: 'ignore' }).status !== 0) {
  // verl without its GPU stack (ray, vLLM, flash-attn): the cross-check needs only its advantage and loss functions.
  execFileSync(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-deps', 'verl==0.9.1'], {
    stdio: 'inherit',
  });
}
pytestSuite(python, 'python/tests', { ALIGHT_SWEBENCH_PYTHON: swebenchPython() });

// The Python side of the house style (ruff.toml: formatted, lines of 120 at most, imports in order, pyflakes clean), with
// the ruff test/setup/prepare.ts installs into the same virtualenv (`npm run lint:py` runs the same two). Most of what
// it finds, `ruff format python/` and `ruff check --fix python/` fix.
describe('python/ style (ruff)', () => {
  for (const args of [
    ['check', 'python/'],
    ['format', '--check', 'python/'],
  ])
    it(`ruff ${args.join(' ')} finds nothing`, () => {
      const res = spawnSync(python, ['-m', 'ruff', ...args], { cwd: packageRoot, encoding: 'utf8' });
      expect(res.status, `${res.stdout}${res.stderr}`).toBe(0);
    });
});
