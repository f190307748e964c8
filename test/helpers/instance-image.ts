import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { buildImage, defaultImage, imageExists, runtimes } from '../../src/eval/grade/container.js';

/**
 * An image in SWE-bench's layout for the fixture repository: alight's Debian + pytest image with the repository
 * cloned at /testbed and checked out at the base commit. Its .git keeps the later (fix) commit, as an image built from
 * a full clone would: the agent's container must not show it.
 */
function makeInstanceImage(repoDir: string, base: string, image: string): string {
  if (imageExists(image)) return image;
  if (!imageExists(defaultImage)) buildImage('podman', defaultImage);
  const name = `alight-test-build-${process.pid}`;
  execFileSync('podman', ['rm', '-f', name], { stdio: 'ignore' });
  try {
    execFileSync(
      'podman',
      [
        'run',
        ...runtimes.podman.runFlags,
        '--name',
        name,
        '-v',
        `${repoDir}:/src:ro`,
        defaultImage,
        'bash',
        '-c',
        'git clone -q /src /testbed && cd /testbed && git checkout -q ' +
          `${base} && git config --global --add safe.directory /testbed`,
      ],
      { stdio: 'ignore' },
    );
    execFileSync('podman', ['commit', '-q', name, image], { stdio: 'ignore' });
  } finally {
    execFileSync('podman', ['rm', '-f', name], { stdio: 'ignore' });
  }
  return image;
}

/**
 * The fixture repository's instance image, tagged by its base commit under `name`: a name of its own per test file,
 * since files run side by side and each removes its image at its end.
 */
export function fixtureImage(fx: { repos: string; base: string }, name: string): string {
  return makeInstanceImage(
    join(fx.repos, 'acme__calc'),
    fx.base,
    `localhost/alight-test/${name}:${fx.base.slice(0, 12)}`,
  );
}
