import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AlightError, ExitCode } from '../../errors.js';
import { probe, probeOrThrow, run, start } from '../../process/launch.js';

/**
 * The grading image alight builds itself: Debian bookworm (debootstrap, minbase) with python3, pytest, git and patch.
 */
export const defaultImage = 'localhost/alight-grader:bookworm';

export const runtimeNames = ['podman', 'docker'] as const;
export type Runtime = (typeof runtimeNames)[number];

/** Processes a container may have at once: its pids cgroup's bound (root ignores `--ulimit nproc`). */
export const containerPids = 1024;

/**
 * The container engines, as `run` needs them: podman with runc and lowered ulimits (what rootless podman on a
 * small Debian machine needs), docker as it comes. Every run has no network (a harness reaches the gateway from
 * this machine, not from inside the container) and a bound on its processes.
 */
export const runtimes: Record<Runtime, { runFlags: string[] }> = {
  podman: {
    runFlags: [
      ...['--runtime', 'runc', '--ulimit', 'nofile=1024:1024', '--ulimit', 'nproc=1024:1024'],
      ...['--pids-limit', String(containerPids), '--network', 'none'],
    ],
  },
  docker: { runFlags: ['--pids-limit', String(containerPids), '--network', 'none'] },
};

/** SWE-bench's prebuilt instance images (`__` becomes `_1776_`, as Docker Hub allows no dunders). */
export const swebenchImageTemplate = 'docker.io/swebench/sweb.eval.x86_64.{id_1776}:latest';

/**
 * An instance's image: the row's own (`image`, `image_name`, `docker_image`), else the template with {id} / {id_1776} /
 * {repo} filled.
 */
export function instanceImage(row: Record<string, unknown>, template = swebenchImageTemplate): string {
  const own = [row.image, row.image_name, row.docker_image].find((v) => typeof v === 'string' && v);
  if (own) return own as string;
  const id = String(row.instance_id);
  return template
    .replaceAll('{id_1776}', id.replaceAll('__', '_1776_').toLowerCase())
    .replaceAll('{id}', id)
    .replaceAll('{repo}', String(row.repo));
}

export function imageExists(image: string, runtime: Runtime = 'podman'): boolean {
  return probe(runtime, ['image', 'inspect', image]).exitCode === 0;
}

/**
 * Runs the engine's CLI without blocking (pulls and `git add -A` in a container take a while); its error output becomes
 * the error.
 */
export async function engine(runtime: Runtime, args: string[]): Promise<string> {
  const r = await run({ command: runtime, args, stdout: { tail: 256 << 20 }, stderr: { tail: 64 << 10 } });
  if (r.exitCode === 0 && r.truncated) throw new Error(`${runtime} ${args[0]} printed more than 256 MB`);
  if (r.exitCode === 0) return r.stdout;
  if (r.reason?.includes('ENOENT')) throw new Error(`${runtime} is not installed`);
  const why = (r.stderr || r.stdout || r.reason || `exit code ${r.exitCode}`).trim().split('\n').slice(-3).join(' ');
  throw new Error(`${runtime} ${args[0]} failed: ${why}`);
}

/** Pulls the image unless the engine has it (before a timed grade or a harness, which should not pay for it). */
export async function ensureImage(runtime: Runtime, image: string): Promise<void> {
  await engine(runtime, ['image', 'inspect', image]).catch(() => engine(runtime, ['pull', image]));
}

/** Copies a folder out of an image (a container created, not started, then removed) to `dest`. */
export async function copyOutOfImage(runtime: Runtime, image: string, path: string, dest: string): Promise<void> {
  const name = `alight-copy-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
  await engine(runtime, ['create', '--name', name, image, 'true']);
  try {
    await engine(runtime, ['cp', `${name}:${path}`, dest]);
  } finally {
    await engine(runtime, ['rm', '-f', name]).catch(() => {});
  }
}

/** Builds the grading image from a debootstrap rootfs (about a minute; needs a Debian mirror); returns its name. */
export function buildImage(
  runtime: Runtime,
  image = defaultImage,
  mirror = 'http://deb.debian.org/debian',
  log: (line: string) => void = () => {},
): string {
  for (const tool of [runtime, 'debootstrap']) {
    if (probe(tool, ['--version']).startError) {
      throw new AlightError(
        `${tool} is not installed: apt-get install --no-install-recommends podman runc debootstrap`,
        ExitCode.failure,
      );
    }
  }
  const rootfs = mkdtempSync(join(tmpdir(), 'alight-rootfs-'));
  try {
    log(`debootstrap bookworm into ${rootfs}`);
    probeOrThrow('debootstrap', [
      '--variant=minbase',
      '--include=python3,python3-pytest,git,patch',
      'bookworm',
      rootfs,
      mirror,
    ]);
    log(`${runtime} import as ${image}`);
    probeOrThrow('sh', ['-c', 'tar -C "$1" -c . | "$3" import - "$2"', 'sh', rootfs, image, runtime]);
    return image;
  } finally {
    rmSync(rootfs, { recursive: true, force: true });
  }
}

/**
 * A Docker engine for what speaks Docker's API (the official harness; the docker CLI): DOCKER_HOST or Docker's socket
 * when there is one; else, where podman is installed, podman's Docker-compatible service until `stop`.
 */
export async function dockerEngine(): Promise<{ env: NodeJS.ProcessEnv; stop: () => void }> {
  if (process.env.DOCKER_HOST || existsSync('/var/run/docker.sock') || probe('podman', ['--version']).startError) {
    return { env: {}, stop: () => {} };
  }
  return podmanDockerService();
}

/** Podman's Docker-compatible service on a private socket, with the runtime flags alight's podman runs use. */
export async function podmanDockerService(): Promise<{ env: NodeJS.ProcessEnv; stop: () => void }> {
  // A short private folder: a Unix socket's path has a limit of about 107 bytes.
  const dir = mkdtempSync(join(tmpdir(), 'alight-podman-'));
  const conf = join(dir, 'containers.conf');
  writeFileSync(
    conf,
    '[containers]\ndefault_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]\n' +
      `pids_limit = ${containerPids}\n[engine]\nruntime = "runc"\n`,
  );
  const socket = join(dir, 'podman.sock');
  const service = start({
    command: 'podman',
    args: ['system', 'service', '--time=0', `unix://${socket}`],
    env: { ...process.env, CONTAINERS_CONF: conf },
  });
  for (let i = 0; i < 100 && !existsSync(socket); i++) await new Promise((r) => setTimeout(r, 100));
  return {
    env: { DOCKER_HOST: `unix://${socket}` },
    stop: () => {
      void service.stop('done');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
