import { resolve } from 'node:path';
import type { K8sConfig } from '../src/config/schema.js';
import { AlightError, ExitCode } from '../src/errors.js';
import { buildImage, defaultImage, imageExists, type Runtime } from '../src/eval/container.js';
import type { GradeRunOptions, GraderName } from '../src/eval/grade-run.js';
import type { GradeOptions } from '../src/eval/grade-types.js';
import { engineSite } from '../src/eval/image-site.js';
import { defaultMemoryMb, defaultProcesses, ensureSandbox } from '../src/eval/sandbox.js';
import { setupProgress } from '../src/ui/setup-progress.js';

/** Which grader and where: the flags of every command that grades (eval swebench, eval grade, data validate). */
export interface GraderFlags {
  repos?: string;
  grader?: GraderName;
  image?: string;
  imageTemplate?: string;
  runtime?: Runtime | 'k8s';
  sandbox?: boolean;
  allowTestFrameworkAccess?: boolean;
}

/**
 * The local grader's sandbox: bubblewrap (installed if missing), hiding `hide` from the code under test; none in
 * containers, which isolate already; none, said loudly, when the user opts out with --no-sandbox.
 */
export async function sandboxFor(
  flags: GraderFlags,
  container: unknown,
  hide: string[],
): Promise<GradeOptions['sandbox']> {
  if (container) return undefined;
  if (flags.sandbox === false) {
    process.stderr.write(
      'alight: grading without a sandbox (--no-sandbox): the ' +
        'code under test runs as you, with your files and network\n',
    );
    return null;
  }
  await ensureSandbox(setupProgress());
  return { hide, memoryMb: defaultMemoryMb, processes: defaultProcesses };
}

/**
 * How predictions are graded. `local`: here, in workspaces from --repos. `podman` / `docker`: in a fresh container per
 * grade, network off: with --repos, alight's image (or --image) with the workspace mounted; without, each instance's
 * own image. `k8s`: a fresh pod of each instance's image. `swebench`: the official package. The default: local with
 * --repos, else the agents' runtime.
 */
export function graderFor(flags: GraderFlags): Grader {
  const grader = flags.grader ?? (flags.repos ? 'local' : flags.runtime);
  const reposDir = flags.repos ? resolve(flags.repos) : undefined;
  if (!grader)
    throw new AlightError(
      "pass --repos <dir> (workspaces made here) or --grader podman|docker|k8s|swebench (each instance's image)",
      ExitCode.usage,
    );
  if (grader === 'swebench') return { reposDir, official: true };
  if (grader === 'local') {
    if (!reposDir)
      throw new AlightError(
        'the local grader makes its workspaces from --repos <dir>: pass ' +
          'it, or grade in the instance images with --grader podman|docker|k8s',
        ExitCode.usage,
      );
    return { reposDir, official: false };
  }
  if (grader === 'k8s' || !reposDir) {
    if (flags.image)
      throw new AlightError(
        '--image names the one image to mount --repos workspaces into (podman or docker): pass --repos, or ' +
          '--image-template for per-instance images',
        ExitCode.usage,
      );
    return grader === 'k8s' ? { reposDir, official: false, pods: true } : { site: engineSite(grader), official: false };
  }
  const image = flags.image ?? defaultImage;
  if (!imageExists(image, grader)) {
    if (flags.image) throw new AlightError(`${grader} has no image ${image}`, ExitCode.input);
    buildImage(grader, image, undefined, (line) => process.stderr.write(`alight: ${line}\n`));
  }
  return { reposDir, container: { runtime: grader, image }, official: false };
}

export type Grader = Pick<GradeRunOptions, 'container' | 'reposDir' | 'site'> & { official: boolean; pods?: boolean };

/**
 * The grader's options for `work`: with `--grader k8s`, its session of grading pods opened first (a cluster that is
 * not there fails the command before any agent runs) and closed after; the Kubernetes client is loaded only then.
 */
export async function withGrader<T>(
  grader: Grader,
  k8s: K8sConfig,
  timeoutS: number,
  work: (g: Omit<Grader, 'pods'>) => Promise<T>,
): Promise<T> {
  const { pods: onPods, ...rest } = grader;
  if (!onPods) return work(rest);
  const [{ openGradePods }, { podSite, podDeadlineS }] = await Promise.all([
    import('../src/k8s/grade-pods.js'),
    import('../src/eval/pod-site.js'),
  ]);
  const pods = await openGradePods(k8s, (line) => process.stderr.write(`alight: ${line}\n`));
  try {
    return await work({ ...rest, site: podSite(pods, podDeadlineS(timeoutS, k8s.pendingS)) });
  } finally {
    await pods.close();
  }
}
