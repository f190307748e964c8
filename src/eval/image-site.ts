import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { applyAndJudge } from './apply-judge.js';
import { copyOutOfImage, ensureImage, type Runtime } from './container.js';
import type { GradeOptions, GradeTask, Ran } from './grader.js';
import { fileSections } from './guards.js';
import { headFile, resetToHead } from './patch-apply.js';
import { prepareResults, readResults, resultsEnv } from './pytest-results.js';
import { runScript } from './run-script.js';
import { evalScript } from './specs.js';
import { changedPaths, snapshot } from './tree-judge.js';

/** One grade's tests in the instance's image, `ws` (the judged workspace) as /testbed. */
export interface SiteRun {
  /** Where the grade keeps its files (eval.sh is in it). */
  dir: string;
  ws: string;
  /** The workspace's paths that differ from the image's /testbed, and of those, the ones that still exist. */
  changed: string[];
  written: string[];
  /** The shell script that runs eval.sh with alight's pytest plugin loaded from /alight/results. */
  script: string;
  /** The results folder: alight's pytest plugin and its key in it before, its signed record after. */
  results: string;
  timeoutMs: number;
  maxOutputBytes: number;
}

/** Where an instance's image runs its grade: a container engine here, or a pod on Kubernetes (pod-site.ts). */
export interface ImageSite {
  /** Copies the image's /testbed to `dest`. */
  copyTestbed(dest: string): Promise<void>;
  /** The tests' log, as runScript writes it. */
  runTests(run: SiteRun): Promise<string>;
  close(): Promise<void>;
}

export type OpenSite = (task: GradeTask) => Promise<ImageSite>;

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
