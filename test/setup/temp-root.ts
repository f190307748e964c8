import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const prefix = 'alight-test-';

/**
 * One temp folder for the whole run, which every test's temp folders, Python's, Ray's sessions and vLLM's compile
 * cache go under (TMPDIR and friends, inherited by the workers and what they start), removed when the run ends: the CI
 * machine keeps its disk between runs, and ~100 folders a run (checkpoints, models, stores) filled it. A run killed
 * before its teardown leaves its folder; the next run removes the folders whose owner is gone.
 */
export function makeRunTempRoot(): () => void {
  const base = tmpdir();
  removeOrphans(base);
  const root = mkdtempSync(join(base, prefix));
  writeFileSync(join(root, 'owner.pid'), String(process.pid));
  mkdirSync(join(root, 'vllm-cache'));
  Object.assign(process.env, {
    TMPDIR: root,
    RAY_TMPDIR: root,
    VLLM_CACHE_ROOT: join(root, 'vllm-cache'),
    VLLM_NO_USAGE_STATS: '1',
  });
  return () => rmSync(root, { recursive: true, force: true });
}

function removeOrphans(base: string): void {
  for (const name of readdirSync(base)) {
    if (!name.startsWith(prefix)) continue;
    const dir = join(base, name);
    if (!alive(Number(readOr(join(dir, 'owner.pid'), '0')))) rmSync(dir, { recursive: true, force: true });
  }
}

function readOr(path: string, fallback: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return fallback;
  }
}

function alive(pid: number): boolean {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
