import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { podmanDockerService } from '../../src/eval/grade/container.js';

/**
 * The real docker CLI against podman's Docker-compatible service, always (not a Docker engine the machine may have):
 * the tests' images are in podman's storage. The CLI is the one on PATH, else the distribution's (docker.io, the binary
 * alone, cached); returns the environment that puts it on PATH and points it at the service, and `stop` for the
 * service.
 */
export async function dockerCli(): Promise<{ env: NodeJS.ProcessEnv; stop: () => void }> {
  const engine = await podmanDockerService();
  const dir = cliDir();
  return { env: { ...engine.env, ...(dir && { PATH: `${dir}${delimiter}${process.env.PATH}` }) }, stop: engine.stop };
}

/** Where the docker CLI is, when it is not on PATH already (null). */
function cliDir(): string | null {
  if (spawnSync('docker', ['--version'], { stdio: 'ignore' }).status === 0) return null;
  const dir = join(homedir(), '.cache', 'alight', 'docker-cli');
  if (existsSync(join(dir, 'docker'))) return dir;
  const work = mkdtempSync(join(tmpdir(), 'alight-docker-cli-'));
  try {
    execFileSync('apt-get', ['download', 'docker.io'], { cwd: work, stdio: 'ignore' });
    const deb = readdirSync(work).find((f) => f.endsWith('.deb'))!;
    execFileSync('dpkg', ['-x', deb, 'x'], { cwd: work });
    mkdirSync(dir, { recursive: true });
    copyFileSync(join(work, 'x', 'usr', 'bin', 'docker'), join(dir, 'docker'));
    return dir;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
