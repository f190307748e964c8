import { dirname } from 'node:path';
import { probe } from '../../process/launch.js';

let resolved: string | null | undefined;

/**
 * The folder of the python3 the local grader's tests run, asked once from `/`: run from the judged tree, a version
 * manager's shim (pyenv reads `.python-version`, asdf `.tool-versions`) would let a file of the prediction choose the
 * interpreter. Put first on the tests' PATH; null where python3 does not run here (the test command then fails plainly).
 */
export function testInterpreterDir(): string | null {
  if (resolved === undefined) {
    const r = probe('python3', ['-c', 'import sys; print(sys.executable)'], { cwd: '/' });
    const exe = r.exitCode === 0 ? r.stdout.trim() : '';
    resolved = exe ? dirname(exe) : null;
  }
  return resolved;
}
