import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { engine, ensureImage, type Runtime, runtimes } from '../grade/container.js';
import { freshWorkspace, repoSource, workspaceDiff } from '../grade/workspace.js';

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
  /** The agent's changes, once its harness ended as rollout `rolloutId`. */
  diff(rolloutId: string): Promise<string>;
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

/**
 * A pod of the instance's image (`--runtime k8s`): the harness runs inside it, in /testbed, after the same fresh
 * history; when it ends, the diff is printed with each line marked by this attempt's own mark, and the pod's log (the
 * rollout's stdout log, read whole once the pod ended) carries it back. Kubernetes joins the pod's stdout and stderr,
 * and a process the harness left behind may still write: only the marked lines are the diff. `wrap` turns the harness
 * command into that script.
 */
export function podWorkspace(logs: string): AgentWorkspace & { wrap(command: string, args: string[]): string[] } {
  const mark = `alight-diff-${randomBytes(8).toString('hex')}`;
  const script =
    `${freshHistory} || exit 97\n"$@"; rc=$?\n` +
    `(${diffSinceBase}) 2>/dev/null | sed 's/^/${mark} /'; echo ${mark}-end\nexit $rc`;
  return {
    cwd: '/testbed',
    env: { ALIGHT_WORKDIR: '/testbed' },
    prepare: async () => {},
    wrap: (command, args) => ['-c', script, 'alight-agent', command, ...args],
    diff: async (rolloutId) => {
      const lines = readFileSync(join(logs, `${rolloutId}.stdout.log`), 'utf8').split('\n');
      if (!lines.includes(`${mark}-end`)) throw new Error('the pod printed no diff');
      const marked = lines.filter((l) => l.startsWith(`${mark} `)).map((l) => l.slice(mark.length + 1));
      return marked.length ? `${marked.join('\n')}\n` : '';
    },
    dispose: async () => {},
  };
}
