import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { applyAndJudge } from './apply-judge.js';
import { copyOutOfImage, ensureImage, type Runtime } from './container.js';
import type { GradeOptions, GradeTask, OpenSite, Ran } from './grade-types.js';
import { fileSections } from './guards.js';
import { headFile, resetToHead } from './patch-apply.js';
import { prepareResults, readResults, resultsEnv } from './pytest-results.js';
import { runScript } from './run-script.js';
import { evalScript } from './specs.js';
import { changedPaths, snapshot } from './tree-judge.js';

/** podman or docker: /testbed copied out of a created container; the tests in a fresh one, network off. */
export const engineSite =
  (runtime: Runtime): OpenSite =>
  async (task) => {
    const image = task.image!;
    await ensureImage(runtime, image); // a pull is not the tests' time
    return {
      copyTestbed: (dest) => copyOutOfImage(runtime, image, '/testbed', dest),
      runTests: (r) =>
        runScript(r.dir, r.script, {
          timeoutMs: r.timeoutMs,
          container: {
            runtime,
            image,
            mounts: [`${r.dir}/eval.sh:/alight/eval.sh:ro`, `${r.ws}:/testbed`, `${r.results}:/alight/results`],
          },
          maxOutputBytes: r.maxOutputBytes,
        }),
      close: async () => {},
    };
  };

/**
 * The task's own image: its /testbed copied out, the prediction applied and judged here as with --repos (the tree
 * restored between tries with the image's git history, moved out of the tree meanwhile), then the eval script in a fresh container or pod of the image with the judged tree
 * as /testbed, network off.
 */
export async function testInImage(
  task: GradeTask,
  dir: string,
  hasPatch: boolean,
  o: GradeOptions & { maxOutputBytes: number },
  open: OpenSite,
): Promise<Ran> {
  const site = await open(task);
  try {
    const ws = join(dir, 'testbed');
    await site.copyTestbed(ws);
    // The image's history out of the tree while the prediction is applied and judged (patch-apply.ts), back for eval.sh.
    const tree = { ws, gitDir: join(dir, 'testbed.git') };
    renameSync(join(ws, '.git'), tree.gitDir);
    const before = snapshot(ws);
    const prepared = await applyAndJudge(tree, hasPatch ? join(dir, 'pred.diff') : null, o, {
      base: (file) => headFile(tree, file),
      reset: () => resetToHead(tree),
      testFiles: fileSections(task.test_patch).flatMap((s) => s.paths),
    });
    if (!('flags' in prepared)) return prepared;
    const after = snapshot(ws);
    const changed = changedPaths(before, after);
    renameSync(tree.gitDir, join(ws, '.git'));
    writeFileSync(join(dir, 'eval.sh'), evalScript(task));
    const results = join(dir, 'results');
    mkdirSync(results);
    const key = prepareResults(results);
    const log = await site.runTests({
      dir,
      ws,
      changed,
      written: changed.filter((p) => after.has(p)),
      script: `${resultsEnv('/alight/results')}cd /testbed\nexec bash /alight/eval.sh\n`,
      results,
      timeoutMs: o.timeoutMs,
      maxOutputBytes: o.maxOutputBytes,
    });
    return { log, flags: prepared.flags, results: readResults(results, key) };
  } finally {
    await site.close();
  }
}
