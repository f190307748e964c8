import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';

const prefix = 'alight-test-';

/**
 * One temp folder for the whole run, which every test's temp folders, Python's, Ray's sessions and vLLM's compile
 * cache go under (TMPDIR and friends, inherited by the workers and what they start), removed when the run ends: the CI
 * machine keeps its disk between runs, and ~240 folders a run (checkpoints, models, stores: ~2.3 GB) filled it. A run
 * killed before its teardown leaves its folder; the next run removes the folders whose owner (named in it) is gone.
 * Inductor's cache is the exception: its precompiled C++ headers (~150 MB) cost vLLM's first start on CPU ~20 s of
 * compiling each run, the same every run, so it is kept with the other installs.
 */
export function makeRunTempRoot(): () => void {
  const base = tmpdir();
  removeOrphans(base);
  // The owner's pid in the name: a folder is never seen without one (Ray's socket paths stay under its 107 bytes).
  const root = mkdtempSync(join(base, `${prefix}${process.pid}-`));
  // Enterable, not listable, by other users: a test runs a module as an unprivileged user from a folder it opened up.
  chmodSync(root, 0o711);
  mkdirSync(join(root, 'vllm-cache'));
  Object.assign(process.env, {
    TMPDIR: root,
    RAY_TMPDIR: root,
    VLLM_CACHE_ROOT: join(root, 'vllm-cache'),
    TORCHINDUCTOR_CACHE_DIR: join(homedir(), '.cache', 'alight', 'torchinductor'),
    VLLM_NO_USAGE_STATS: '1',
  });
  return () => remove(root);
}

function removeOrphans(base: string): void {
  for (const name of readdirSync(base)) {
    const pid = name.startsWith(prefix) ? Number(name.slice(prefix.length).split('-')[0]) : 0;
    if (pid > 0 && !alive(pid)) remove(join(base, name));
  }
}

/** Removes a folder; one it cannot (another user's, files still being written) is left, never failing the run. */
function remove(dir: string): void {
  try {
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  } catch (err) {
    process.stderr.write(`alight tests: could not remove ${dir}: ${(err as Error).message}\n`);
  }
}

/** Whether a process runs (one of another user's, which may not be signalled, does). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
