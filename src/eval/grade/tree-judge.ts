import { lstatSync, mkdirSync, readdirSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type GuardResult, gitMetadata, protectedReason } from './guards.js';

/**
 * The workspace judged after the prediction was applied, whatever applied it (git, GNU patch with its own reading of
 * names, formats and links): every path that differs from the base tree is looked at, so no diff syntax walks around
 * it. Protected paths, new or retargeted symlinks and files that shadow a module the test run imports are reverted
 * and flagged.
 */
export interface Entry {
  kind: 'file' | 'dir' | 'link';
  size: number;
  mtimeMs: number;
  /** Permission bits: a patch's `new mode` changes only these. */
  mode: number;
  target?: string;
}
export type Tree = Map<string, Entry>;

export function snapshot(root: string): Tree {
  const tree: Tree = new Map();
  const walk = (rel: string): void => {
    for (const name of readdirSync(join(root, rel))) {
      const path = rel ? `${rel}/${name}` : name;
      const st = lstatSync(join(root, path));
      const kind = st.isSymbolicLink() ? 'link' : st.isDirectory() ? 'dir' : 'file';
      tree.set(path, {
        kind,
        size: st.size,
        mtimeMs: st.mtimeMs,
        mode: st.mode & 0o7777,
        ...(kind === 'link' && { target: readlinkSync(join(root, path)) }),
      });
      if (kind === 'dir') walk(path);
    }
  };
  walk('');
  return tree;
}

/** Paths added, removed or changed between two snapshots, parents before children. */
export function changedPaths(before: Tree, after: Tree): string[] {
  const changed = new Set<string>();
  for (const [path, e] of after) {
    const b = before.get(path);
    if (
      !b ||
      b.kind !== e.kind ||
      b.target !== e.target ||
      (e.kind === 'file' && (b.size !== e.size || b.mtimeMs !== e.mtimeMs || b.mode !== e.mode))
    )
      changed.add(path);
  }
  for (const path of before.keys()) if (!after.has(path)) changed.add(path);
  return [...changed].sort();
}

/** What the judge needs to know of the run: the names the test run imports and where it looks for them. */
export interface JudgeContext {
  /** Module names a file may not shadow: the standard library's and the test framework's. */
  modules: Set<string>;
  /** Folders on the test run's sys.path (relative; '' is the workspace root). */
  importRoots: Set<string>;
  /** The base's content of a path (undefined: it did not exist). */
  base(path: string): string | undefined;
}

type Flag = GuardResult['flags'][number];

function reason(path: string, before: Entry | undefined, after: Entry | undefined, cx: JudgeContext): string | null {
  if (after?.kind === 'link' && before?.target !== after.target)
    return `a new or retargeted symlink (to ${after.target}) can lead writes into protected paths`;
  const slash = path.lastIndexOf('/');
  const [dir, name] = slash === -1 ? ['', path] : [path.slice(0, slash), path.slice(slash + 1)];
  const module = name.replace(/\.py$/, '');
  if (!before && cx.importRoots.has(dir) && (after?.kind === 'dir' || name.endsWith('.py')) && cx.modules.has(module)) {
    return `shadows the module ${module}, which the test run imports`;
  }
  return protectedReason(path);
}

/** Puts a path back as the base had it, a folder with everything in it (or removes a path the base lacked). */
function revert(ws: string, path: string, tree: Tree, cx: JudgeContext): void {
  rmSync(join(ws, path), { recursive: true, force: true });
  for (const [p, e] of tree) {
    if (p !== path && !p.startsWith(`${path}/`)) continue;
    if (e.kind === 'dir') mkdirSync(join(ws, p), { recursive: true });
    else if (e.kind === 'link') symlinkSync(e.target!, join(ws, p));
    else writeFileSync(join(ws, p), cx.base(p) ?? '');
  }
}

/**
 * Judges the applied workspace against its snapshot before applying: reverts and flags each path it refuses (the
 * removal is the flag's `removed`; with `allowTestEdits` protected paths stay, flagged; links and shadowing never do).
 * `kept`: the changed files left in place, for the content checks.
 */
export function judgeTree(
  ws: string,
  before: Tree,
  cx: JudgeContext,
  allowTestEdits: boolean,
): { flags: Flag[]; kept: string[] } {
  const after = snapshot(ws);
  const flags: Flag[] = [];
  const reverted: string[] = [];
  const kept: string[] = [];
  for (const path of changedPaths(before, after)) {
    if (reverted.some((r) => path.startsWith(`${r}/`))) continue;
    const why = reason(path, before.get(path), after.get(path), cx);
    const keep = !why || (allowTestEdits && protectedReason(path) === why && why !== gitMetadata);
    if (why) flags.push({ file: path, reason: why, removed: !keep });
    if (keep) {
      if (after.get(path)?.kind === 'file') kept.push(path);
      continue;
    }
    revert(ws, path, before, cx);
    reverted.push(path);
  }
  return { flags, kept };
}
