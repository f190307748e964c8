import { execFileSync, spawnSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensurePythonEnv } from '../../src/worker/python-env.js';
import { packageRoot } from '../../src/package-root.js';
import { swebenchPython } from '../helpers/swebench-python.js';

// python/tests (pytest) run inside the one test command: collected here, run once, each reported as a test of its own.
const python = ensurePythonEnv((line) => process.stderr.write(`python tests: ${line}\n`), ['requirements-test.txt']);
if (spawnSync(python, ['-c', 'import verl'], { stdio: 'ignore' }).status !== 0) {
  // verl without its GPU stack (ray, vLLM, flash-attn): the cross-check needs only its advantage and loss functions.
  execFileSync(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-deps', 'verl==0.9.1'], { stdio: 'inherit' });
}
const swebench = swebenchPython(); // the official package, for the eval cross-checks
const pytest = (args: string[]) => spawnSync(python, ['-m', 'pytest', 'python/tests', '-p', 'no:cacheprovider', ...args],
  { cwd: packageRoot, encoding: 'utf8', maxBuffer: 64 << 20, env: { ...process.env, ALIGHT_SWEBENCH_PYTHON: swebench } });
const collected = pytest(['--collect-only', '-q']).stdout.split('\n').filter((l) => l.includes('::'));

let outcomes = new Map<string, string>();
let output = '';
beforeAll(() => {
  const res = pytest(['-q', '-rA']);
  output = `${res.stdout}\n${res.stderr}`;
  outcomes = new Map([...output.matchAll(/^(PASSED|FAILED|ERROR|SKIPPED) (\S+)(.*)$/gm)].map((m) => [m[2], `${m[1]}${m[3]}`]));
}, 600_000);

describe('python/tests', () => {
  it('collects the Python tests', () => expect(collected.length).toBeGreaterThan(0));
  for (const id of collected) it(id, () => expect(outcomes.get(id), output.slice(-4000)).toBe('PASSED'));
});
