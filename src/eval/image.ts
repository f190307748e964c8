import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AlightError, ExitCode } from '../errors.js';

/** The grading image alight builds itself: Debian bookworm (debootstrap, minbase) with python3, pytest, git and patch. */
export const defaultImage = 'localhost/alight-grader:bookworm';

/** `podman run`'s flags for this kind of machine: runc, lowered ulimits, no network. */
export const podmanRunFlags = ['--rm', '--runtime', 'runc', '--ulimit', 'nofile=1024:1024', '--ulimit', 'nproc=1024:1024', '--network', 'none'];

export function imageExists(image: string): boolean {
  return spawnSync('podman', ['image', 'exists', image], { stdio: 'ignore' }).status === 0;
}

/** Builds the grading image from a debootstrap rootfs (about a minute; needs a Debian mirror); returns its name. */
export function buildImage(image = defaultImage, mirror = 'http://deb.debian.org/debian', log: (line: string) => void = () => {}): string {
  for (const tool of ['podman', 'debootstrap']) {
    if (spawnSync(tool, ['--version'], { stdio: 'ignore' }).error) {
      throw new AlightError(`${tool} is not installed: apt-get install --no-install-recommends podman runc debootstrap`, ExitCode.failure);
    }
  }
  const rootfs = mkdtempSync(join(tmpdir(), 'alight-rootfs-'));
  try {
    log(`debootstrap bookworm into ${rootfs}`);
    execFileSync('debootstrap', ['--variant=minbase', '--include=python3,python3-pytest,git,patch', 'bookworm', rootfs, mirror], { stdio: 'ignore' });
    log(`podman import as ${image}`);
    execFileSync('sh', ['-c', 'tar -C "$1" -c . | podman import - "$2"', 'sh', rootfs, image], { stdio: 'ignore' });
    return image;
  } finally {
    rmSync(rootfs, { recursive: true, force: true });
  }
}
