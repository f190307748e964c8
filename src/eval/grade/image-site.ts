import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { applyAndJudge, applyTestPatch } from './apply-judge.js';
import { copyOutOfImage, ensureImage, type Runtime } from './container.js';
import type { GradeOptions, GradeTask, OpenSite, Ran } from './grade-types.js';
import { fileSections } from './guards.js';
import { cutToBase, headFile, resetToHead, type Target } from './patch-apply.js';
import { prepareResults, readResults, resultsEnv } from './pytest-results.js';
import { runScript } from './run-script.js';
import { evalScript } from './specs.js';
import { changedPaths, snapshot } from './tree-judge.js';
import { type TestSources, testSources } from './xfail-sources.js';

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
 * The task's own image: its /testbed copied out, its git history cut to the base commit and moved out of the tree while
 * the prediction is applied and judged here as with --repos (the tree restored between tries from it), then the eval
 * script in a fresh container or pod of the image with the judged tree as /testbed, network off.
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
    // The image's history out of the tree while the prediction is applied and judged (patch-apply.ts), cut to the base
    // commit, back for eval.sh.
    const tree = { ws, gitDir: join(dir, 'testbed.git') };
    renameSync(join(ws, '.git'), tree.gitDir);
    cutToBase(tree, task.base_commit);
    const before = snapshot(ws);
    const prepared = await applyAndJudge(tree, hasPatch ? join(dir, 'pred.diff') : null, o, {
      base: (file) => headFile(tree, file),
      reset: () => resetToHead(tree),
      testFiles: testFilesOf(task),
    });
    if (!('flags' in prepared)) return prepared;
    const after = snapshot(ws);
    const changed = changedPaths(before, after);
    const xfails = await testSourcesHere(tree, dir, task, o.timeoutMs);
    if ('error' in xfails) return xfails;
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
    return { log, flags: prepared.flags, results: readResults(results, key), xfails };
  } finally {
    await site.close();
  }
}

const testFilesOf = (task: GradeTask): string[] => fileSections(task.test_patch).flatMap((s) => s.paths);

/**
 * The test sources as eval.sh will make them, read here before anything runs (as with --repos): the test patch applied
 * to the judged tree, the files read, then put back as the prediction left them (eval.sh does its own checkout).
 */
async function testSourcesHere(
  tree: Target,
  dir: string,
  task: GradeTask,
  timeoutMs: number,
): Promise<TestSources | { error: string }> {
  const files = testFilesOf(task);
  const left = new Map(files.map((f) => [f, existsSync(join(tree.ws, f)) ? readFileSync(join(tree.ws, f)) : null]));
  const failed = await applyTestPatch(tree, dir, task.test_patch, (file) => headFile(tree, file), timeoutMs);
  if (failed) return failed;
  const sources = testSources(tree.ws, files);
  for (const [file, text] of left) {
    rmSync(join(tree.ws, file), { recursive: true, force: true });
    if (text) writeFileSync(join(tree.ws, file), text);
  }
  return sources;
}
