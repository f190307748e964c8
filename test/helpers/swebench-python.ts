import { execFileSync, spawnSync } from 'node:child_process';
import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * The official swebench package (5.0.2) in a virtualenv of its own, made on first use; returns its python. Its
 * dependencies (datasets, pyarrow on numpy 2) cannot share the worker's, which keeps Debian's torch on numpy 1.x. Its
 * own requirements pull in the whole Modal harness; installed without them, it needs only these to grade with Docker.
 * pip would print the left-out requirements as an ERROR on a fresh machine: `--no-warn-conflicts`, as they are meant.
 */
export function swebenchPython(): string {
  const venv = join(homedir(), '.cache', 'alight', 'swebench');
  const python = join(venv, 'bin', 'python');
  if (spawnSync(python, ['-c', 'import swebench.harness.run_evaluation'], { stdio: 'ignore' }).status !== 0) {
    execFileSync('python3', ['-m', 'venv', venv], { stdio: 'inherit' });
    const quiet = ['--quiet', '--disable-pip-version-check', '--no-warn-conflicts'];
    const pip = (args: string[]) =>
      execFileSync(python, ['-m', 'pip', 'install', ...quiet, ...args], { stdio: 'inherit' });
    pip(['--no-deps', 'swebench==5.0.2']);
    pip(['docker', 'unidiff', 'datasets', 'python-dotenv', 'modal', 'tenacity']);
  }
  return python;
}
