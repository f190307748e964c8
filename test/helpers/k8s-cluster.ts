import { readFileSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { AlightError } from '../../src/errors.js';
import { packageRoot } from '../../src/package-root.js';
import { run } from '../../src/process/launch.js';
import type { SetupListener } from '../../src/setup/events.js';

/**
 * The Kubernetes runner's tests run against a real single-node cluster: scripts/k8s-local builds it once (~20 min cold,
 * cached under ~/.cache/alight/k8s), starts it (~10 s) and stops it, undoing what it changed on this host.
 */
export const K8S_DIR = join(homedir(), '.cache', 'alight', 'k8s');
export const KUBECONFIG = join(K8S_DIR, 'admin.kubeconfig');
const scripts = join(packageRoot, 'scripts', 'k8s-local');

async function script(name: string, onLine: (line: string) => void, timeoutMs: number): Promise<void> {
  const tail: string[] = [];
  const lines = (line: string): void => {
    onLine(line);
    tail.push(line);
    if (tail.length > 20) tail.shift();
  };
  const r = await run({ command: join(scripts, name), args: [], stdout: { lines }, stderr: { lines }, timeoutMs });
  if (r.exitCode !== 0)
    throw new AlightError(`scripts/k8s-local/${name} failed (${r.reason ?? r.exitCode}):\n${tail.join('\n')}`);
}

/** Builds the cluster's binaries and images unless they are there (global set-up, with progress). */
export function prepareCluster(listener: SetupListener): Promise<void> {
  return script(
    'prepare.sh',
    (line) => line.startsWith('[k8s') && listener({ type: 'step', message: line }),
    60 * 60_000,
  );
}

export function clusterUp(): Promise<void> {
  return script('up.sh', () => {}, 300_000);
}

export function clusterDown(): Promise<void> {
  return script('down.sh', () => {}, 120_000);
}

/**
 * Kills the API server (SIGKILL, as a crash would: on SIGTERM it waits for its watches to drain, a minute or more) and
 * waits for it to be gone; the rest of the cluster runs on.
 */
export async function stopApiServer(): Promise<void> {
  const pid = Number(readFileSync(join(K8S_DIR, 'run', 'pids', 'kube-apiserver'), 'utf8'));
  process.kill(pid, 'SIGKILL');
  for (let i = 0; i < 100; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`kube-apiserver (pid ${pid}) did not exit`);
}

/** Puts an image podman built into the cluster's containerd (no registry: `podman save`, then `ctr images import`). */
export async function importImage(image: string): Promise<void> {
  const tar = join(K8S_DIR, 'run', `import-${process.pid}.tar`);
  try {
    for (const [command, args] of [
      ['podman', ['save', '--format', 'docker-archive', '-o', tar, image]],
      [
        'ctr',
        ['--address', join(K8S_DIR, 'run', 'containerd', 'containerd.sock'), '-n', 'k8s.io', 'images', 'import', tar],
      ],
    ] as const) {
      const r = await run({ command, args: [...args], stdout: 'ignore', stderr: { tail: 4096 } });
      if (r.exitCode !== 0) throw new Error(`${command} ${args[0]} failed: ${r.stderr || r.reason}`);
    }
  } finally {
    rmSync(tar, { force: true });
  }
}
