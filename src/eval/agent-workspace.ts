import { mkdirSync, rmSync } from 'node:fs';
import { engine, ensureImage, type Runtime, runtimes } from './container.js';
import { freshWorkspace, repoSource, workspaceDiff } from './workspace.js';

/**
 * Where an agent works on one attempt: made before its harness starts, read for the prediction when it ends, then
 * removed. Either a folder on this machine (from --repos) or a container of the instance's image; in both the tree is
 * the base commit's alone, committed once, so there is no future history to read and `git diff` shows the agent's
 * changes only.
 */
export interface AgentWorkspace {
  /** The harness's working folder on this machine. */
  cwd: string;
  /** What the harness is told besides the usual variables (the container to work in). */
  env: Record<string, string>;
  prepare(): Promise<void>;
  diff(): Promise<string>;
  dispose(): Promise<void>;
}

export function hostWorkspace(reposDir: string, repo: string, commit: string, dir: string): AgentWorkspace {
  return {
    cwd: dir,
    env: {},
    prepare: async () => {
      rmSync(dir, { recursive: true, force: true });
      freshWorkspace(repoSource(reposDir, repo), commit, dir);
    },
    diff: async () => workspaceDiff(dir),
    dispose: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

const freshHistory =
  'cd /testbed && rm -rf .git && git init -q && git add -A && ' +
  'git -c user.name=alight -c user.email=alight@localhost commit -q --allow-empty -m base';
const diffSinceBase =
  'cd /testbed && git add -A && git diff --cached --binary "$(git rev-list --max-parents=0 HEAD | head -n 1)"';

/**
 * A container of the instance's image, kept running while the harness works: the harness runs on this machine (it
 * reaches the gateway here; the container has no network) and works in the container through
 * `$ALIGHT_CONTAINER_RUNTIME exec -w $ALIGHT_WORKDIR $ALIGHT_CONTAINER …`, as SWE agents do with their Docker
 * environments. /testbed's history is replaced by one commit of its tree.
 */
export function containerWorkspace(runtime: Runtime, image: string, name: string, dir: string): AgentWorkspace {
  return {
    cwd: dir,
    env: { ALIGHT_CONTAINER: name, ALIGHT_CONTAINER_RUNTIME: runtime, ALIGHT_WORKDIR: '/testbed' },
    prepare: async () => {
      mkdirSync(dir, { recursive: true });
      await ensureImage(runtime, image);
      await engine(runtime, ['rm', '-f', name]);
      await engine(runtime, ['run', '-d', ...runtimes[runtime].runFlags, '--name', name, image, 'sleep', 'infinity']);
      await engine(runtime, ['exec', name, 'bash', '-c', freshHistory]);
    },
    diff: () => engine(runtime, ['exec', name, 'bash', '-c', diffSinceBase]),
    dispose: async () => {
      // `sleep` as the container's first process ignores SIGTERM: kill, then remove.
      await engine(runtime, ['kill', name]).catch(() => {
        /* never started, or stopped */
      });
      await engine(runtime, ['rm', '-f', name]).catch(() => {
        /* never started */
      });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
