import { AlightError, ExitCode } from '../../errors.js';
import { buildImage, defaultImage, imageExists, type Runtime } from '../grade/container.js';
import type { Grader, GraderOptions } from '../grade/grade-types.js';
import { engineSite } from '../grade/image-site.js';

/**
 * `podman` / `docker`: a fresh container per grade, network off. With --repos, alight's image (or --image) with the
 * workspace mounted (built first if it is alight's and missing); without, each instance's own image.
 */
export const engineGrader = (runtime: Runtime): Grader => ({
  check(o, notice) {
    if (o.image && !o.reposDir) throw imageWithoutRepos();
    if (o.reposDir) ensureMountImage(runtime, o, notice);
  },
  async open(o, _at, work) {
    if (!o.reposDir) return work({ kind: 'image', open: engineSite(runtime) });
    return work({ kind: 'mounted', reposDir: o.reposDir, runtime, image: o.image ?? defaultImage });
  },
});

/** The image --repos workspaces are mounted into: --image, which must exist, or alight's own, built if missing. */
function ensureMountImage(runtime: Runtime, o: GraderOptions, notice: (line: string) => void): void {
  const image = o.image ?? defaultImage;
  if (imageExists(image, runtime)) return;
  if (o.image) throw new AlightError(`${runtime} has no image ${image}`, ExitCode.input);
  buildImage(runtime, image, undefined, notice);
}

export const imageWithoutRepos = (): AlightError =>
  new AlightError(
    '--image names the one image to mount --repos workspaces into (podman or docker): pass --repos, or ' +
      '--image-template for per-instance images',
    ExitCode.usage,
  );
