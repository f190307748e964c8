import { resolve } from 'node:path';
import type { K8sConfig } from '../src/config/schema.js';
import { AlightError, ExitCode } from '../src/errors.js';
import { buildImage, defaultImage, imageExists } from '../src/eval/grade/container.js';
import type { Grader, HostSandbox, ReadyGrader, TestSite } from '../src/eval/grade/grade-types.js';
import { engineSite } from '../src/eval/grade/image-site.js';
import { defaultMemoryMb, defaultProcesses, ensureSandbox } from '../src/eval/grade/sandbox.js';
import { setupProgress } from '../src/ui/setup-progress.js';
import type { FlagsOf } from './flags.js';
import type { graderFlags, gradingFlags, reposOption, runtimeOption } from './table/declared-eval.js';

/**
 * What picks the grader (graderFor): the grader flags, --repos, --no-sandbox and eval swebench's --runtime; each
 * command that grades (eval swebench, eval grade, data validate) declares some of them.
 */
export type GraderFlags = Partial<
  FlagsOf<
    ReturnType<typeof graderFlags> &
      Pick<ReturnType<typeof gradingFlags>, 'sandbox'> & {
        repos: ReturnType<typeof reposOption>;
        runtime: ReturnType<typeof runtimeOption>;
      }
  >
>;

/**
 * The local grader's sandbox: bubblewrap (installed if missing); none, said loudly, when the user opts out with
 * --no-sandbox. (Containers and pods isolate already: they need none.)
 */
export async function sandboxFor(sandboxed: boolean): Promise<HostSandbox | null> {
  if (!sandboxed) {
    process.stderr.write(
      'alight: grading without a sandbox (--no-sandbox): the ' +
        'code under test runs as you, with your files and network\n',
    );
    return null;
  }
  await ensureSandbox(setupProgress());
  return { memoryMb: defaultMemoryMb, processes: defaultProcesses };
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
  if (grader === 'swebench') return { kind: 'official' };
  if (grader === 'local') {
    if (!reposDir)
      throw new AlightError(
        'the local grader makes its workspaces from --repos <dir>: pass ' +
          'it, or grade in the instance images with --grader podman|docker|k8s',
        ExitCode.usage,
      );
    return { kind: 'host', reposDir, sandboxed: flags.sandbox !== false };
  }
  if (grader === 'k8s' || !reposDir) {
    if (flags.image)
      throw new AlightError(
        '--image names the one image to mount --repos workspaces into (podman or docker): pass --repos, or ' +
          '--image-template for per-instance images',
        ExitCode.usage,
      );
    return grader === 'k8s' ? { kind: 'pods' } : { kind: 'image', runtime: grader };
  }
  const image = flags.image ?? defaultImage;
  if (!imageExists(image, grader)) {
    if (flags.image) throw new AlightError(`${grader} has no image ${image}`, ExitCode.input);
    buildImage(grader, image, undefined, (line) => process.stderr.write(`alight: ${line}\n`));
  }
  return { kind: 'mounted', reposDir, runtime: grader, image };
}

/** Where a command grades: the cluster for `pods`, their tests' timeout (seconds). */
export interface GradingAt {
  k8s: K8sConfig;
  timeoutS: number;
}

/** The grader made ready for `work` (see withSite); the official package needs nothing made. */
export function withGrader<T>(grader: Grader, at: GradingAt, work: (g: ReadyGrader) => Promise<T>): Promise<T> {
  return grader.kind === 'official' ? work(grader) : withSite(grader, at, work);
}

/**
 * Where alight's grader tests, made ready for `work`: the host's sandbox set up, an instance image's site; for `pods`,
 * the session of grading pods opened first (a cluster that is not there fails the command before any agent runs) and
 * closed after; the Kubernetes client is loaded only then.
 */
export async function withSite<T>(
  grader: Exclude<Grader, { kind: 'official' }>,
  at: GradingAt,
  work: (site: TestSite) => Promise<T>,
): Promise<T> {
  if (grader.kind === 'host')
    return work({ kind: 'host', reposDir: grader.reposDir, sandbox: await sandboxFor(grader.sandboxed) });
  if (grader.kind === 'image') return work({ kind: 'image', open: engineSite(grader.runtime) });
  if (grader.kind === 'mounted') return work(grader);
  const [{ openGradePods }, { podSite, podDeadlineS }] = await Promise.all([
    import('../src/k8s/grade-pods.js'),
    import('../src/eval/grade/pod-site.js'),
  ]);
  const pods = await openGradePods(at.k8s, (line) => process.stderr.write(`alight: ${line}\n`));
  try {
    return await work({ kind: 'image', open: podSite(pods, podDeadlineS(at.timeoutS, at.k8s.pendingS)) });
  } finally {
    await pods.close();
  }
}
