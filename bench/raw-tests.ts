import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freshWorkspace, git, repoSource } from '../src/eval/grade/workspace.js';
import type { makeSweRepo } from '../test/helpers/swe-repo.js';

/**
 * The graders' baseline: the fixture's raw test command, alone, in a workspace under `root` that already has the fix
 * and the test patch (the same command, the same files a grade runs): seconds per run, the mean of `runs`.
 */
export function rawTestSeconds(fx: ReturnType<typeof makeSweRepo>, root: string, runs = 10): number {
  const ws = join(root, 'raw');
  freshWorkspace(repoSource(fx.repos, 'acme/calc'), fx.base, ws);
  writeFileSync(join(root, 'fix.diff'), fx.instance.patch);
  writeFileSync(join(root, 'test.diff'), fx.instance.test_patch);
  git(ws, ['apply', join(root, 'fix.diff')]);
  git(ws, ['apply', join(root, 'test.diff')]);
  const started = performance.now();
  for (let i = 0; i < runs; i++)
    spawnSync('bash', ['-c', `${fx.instance.test_cmd} tests/test_calc.py`], { cwd: ws, stdio: 'ignore' });
  return (performance.now() - started) / 1000 / runs;
}
