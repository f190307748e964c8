import { execFileSync, spawnSync } from 'node:child_process';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensurePythonEnv } from '../../src/worker/python-env.js';
import { packageRoot } from '../../src/package-root.js';

// python/tests (pytest) run inside the one test command: collected here, run once, each reported as a test of its own.
const python = ensurePythonEnv((line) => process.stderr.write(`python tests: ${line}\n`), ['requirements-test.txt']);
if (spawnSync(python, ['-c', 'import verl'], { stdio: 'ignore' }).status !== 0) {
  // verl without its GPU stack (ray, vLLM, flash-attn): the cross-check needs only its advantage and loss functions.
  execFileSync(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-deps', 'verl==0.9.1'], { stdio: 'inherit' });
}
// The official swebench package for the eval cross-check, in a virtualenv of its own: its dependencies (datasets,
// pyarrow on numpy 2) cannot share the worker's, which keeps Debian's torch on numpy 1.x. Its own requirements pull in
// the whole Docker/Modal harness; installed without them, it needs only these to import its parsers and grading.
const swebench = join(homedir(), '.cache', 'alight', 'swebench', 'bin', 'python');
if (spawnSync(swebench, ['-c', 'import swebench.harness.grading'], { stdio: 'ignore' }).status !== 0) {
  execFileSync('python3', ['-m', 'venv', join(homedir(), '.cache', 'alight', 'swebench')], { stdio: 'inherit' });
  const pip = (args: string[]) => execFileSync(swebench, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', ...args], { stdio: 'inherit' });
  pip(['--no-deps', 'swebench==5.0.2']);
  pip(['docker', 'unidiff', 'datasets', 'python-dotenv', 'modal', 'tenacity']);
}
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
