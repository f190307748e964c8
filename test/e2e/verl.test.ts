import { ensureVerlEnv } from '../../src/worker/verl-env.js';
import { pytestSuite } from '../helpers/pytest-suite.js';

// python/tests_verl in the verl backend's own virtualenv (torch 2.11, verl 0.9.1 with its trainer's dependencies, Ray),
// made on first use as `alight doctor --setup --backend verl` makes it (~3 GB from PyPI, about 2 min here).
pytestSuite(ensureVerlEnv((line) => process.stderr.write(`verl tests: ${line}\n`)), 'python/tests_verl', { RAY_AUTH_MODE: 'disabled' });
