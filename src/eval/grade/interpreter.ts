import { dirname, join } from 'node:path';
import { probe } from '../../process/launch.js';

/** The python3 the local grader's tests run: the folder to put first on their PATH, the prefixes it runs from. */
export interface TestRuntime {
  bin: string;
  /** sys.prefix and the base and exec prefixes, resolved: the sandbox shows them read-only (sandbox-view.ts). */
  prefixes: string[];
}

const ask =
  'import os, sys\nprint(sys.executable)\n' +
  'for p in {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}: print(os.path.realpath(p))';

let resolved: TestRuntime | null | undefined;

/**
 * The python3 the local grader's tests run, asked once from `/`: run from the judged tree, a version manager's shim
 * (pyenv reads `.python-version`, asdf `.tool-versions`) would let a file of the prediction choose the interpreter.
 * Null where python3 does not run here (the test command then fails plainly).
 */
export function testRuntime(): TestRuntime | null {
  if (resolved === undefined) {
    const r = probe('python3', ['-c', ask], { cwd: '/' });
    const [exe, ...prefixes] = r.exitCode === 0 ? r.stdout.trim().split('\n') : [];
    resolved = exe ? { bin: dirname(exe), prefixes } : null;
  }
  return resolved;
}

/** That python3's path (no version manager's shim on the way: a shim's start costs more than a small suite's grade). */
export const testPython = (): string => {
  const runtime = testRuntime();
  return runtime ? join(runtime.bin, 'python3') : 'python3';
};
