import { execFileSync, spawnSync } from 'node:child_process';
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
