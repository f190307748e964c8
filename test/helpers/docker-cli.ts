import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { dockerEngine } from '../../src/eval/container.js';

/**
 * The real docker CLI against a Docker API: Docker's own where there is one, else podman's Docker-compatible service
 * (no Docker engine runs here). The CLI is Debian's (docker.io, the binary alone, cached); returns the environment that
 * puts it first on PATH and points it at the engine, and `stop` for the service.
 */
export async function dockerCli(): Promise<{ env: NodeJS.ProcessEnv; stop: () => void }> {
  const engine = await dockerEngine();
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
