import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileSections, type GuardResult } from './guards.js';
import { onTree, type Target } from './patch-apply.js';
import { shadowableModules } from './shadowing.js';
import { tamperFlags } from './tamper-flags.js';
import { type JudgeContext, judgeTree, snapshot } from './tree-judge.js';

export const applyFailed = '>>>>> Patch Apply Failed';
export { frameworkAccessReason } from './tamper-flags.js';

/** The official harness's ways to apply a prediction, in order. */
const applyTries = [
  ['git', 'apply', '--verbose'],
  ['git', 'apply', '--verbose', '--reject'],
  ['patch', '--batch', '--fuzz=5', '-p1', '-i'],
];

/**
 * The official ways in order, the tree back at the base between tries (a failed `git apply --reject` leaves half a
 * patch), each bounded by the grade's timeout, run without blocking the other grades and confined (patch-apply.ts). As
 * the official harness, a patch the chain left wholly applied while each try failed counts.
 */
async function applyPrediction(
  t: Target,
  diff: string,
  timeoutMs: number,
  reset: () => void,
): Promise<boolean | 'timeout'> {
  const deadline = Date.now() + timeoutMs;
  const left = (): number => Math.max(1, deadline - Date.now());
  for (const [i, [cmd, ...args]] of applyTries.entries()) {
    if (i > 0) reset();
    const { ok } = await onTree(t, cmd, [...args, diff], { reads: [diff], timeoutMs: left() });
    if (ok) return ok;
  }
  return (await onTree(t, 'git', ['apply', '--check', '--reverse', diff], { reads: [diff], timeoutMs: left() })).ok;
}

export interface Prepared {
  flags: GuardResult['flags'];
}

/**
 * The prediction applied to a workspace at the base (`t`, patch-apply.ts) and the result judged as a tree (tree-judge.ts), whatever
 * applied it: the flags, the log of a failed apply, or an error. `base` reads a file as the base has it; `reset`
 * puts the workspace back at the base; `testFiles` are the test patch's paths (their folders are import roots).
 */
export async function applyAndJudge(
  t: Target,
  diff: string | null,
  o: { timeoutMs: number; allowTestEdits: boolean },
  at: { base: JudgeContext['base']; reset: () => void; testFiles: string[] },
): Promise<Prepared | { log: string } | { error: string }> {
  const { ws } = t;
  const before = snapshot(ws);
  if (diff) {
    const applied = await applyPrediction(t, diff, o.timeoutMs, at.reset);
    if (applied === 'timeout') return { error: `applying the patch took over ${o.timeoutMs / 1000} s` };
    if (!applied) return { log: `${applyFailed}\n` };
  }
  const cx: JudgeContext = {
    modules: shadowableModules(),
    base: at.base,
    importRoots: new Set(['', ...at.testFiles.map((f) => (f.includes('/') ? f.slice(0, f.lastIndexOf('/')) : ''))]),
  };
  const { flags, kept } = judgeTree(ws, before, cx, o.allowTestEdits);
  flags.push(...tamperFlags(ws, kept, cx));
  return { flags };
}

/**
 * The test patch on the judged tree: every file it touches as the base has it (or absent), whatever the prediction
 * did, as the official eval script does, then the patch; why it failed, or null.
 */
export async function applyTestPatch(
  tree: Target,
  dir: string,
  testPatch: string,
  base: (file: string) => string | undefined,
  timeoutMs: number,
): Promise<{ error: string } | null> {
  for (const file of new Set(fileSections(testPatch).flatMap((s) => s.paths))) {
    const original = base(file);
    rmSync(join(tree.ws, file), { recursive: true, force: true });
    if (original !== undefined) writeFileSync(join(tree.ws, file), original);
  }
  writeFileSync(join(dir, 'test.diff'), testPatch);
  const test = await onTree(tree, 'git', ['apply', '-v', join(dir, 'test.diff')], {
    reads: [join(dir, 'test.diff')],
    timeoutMs,
  });
  const lastLine = test.said.trim().split('\n').at(-1) ?? 'no word from git';
  return test.ok === true ? null : { error: `the test patch did not apply: ${lastLine}` };
}
