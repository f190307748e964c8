import { AlightError, ExitCode } from '../../errors.js';
import type { SetupListener } from '../../setup/events.js';
import type { Grader, HostSandbox } from '../grade/grade-types.js';
import { defaultMemoryMb, defaultProcesses, ensureSandbox } from '../grade/sandbox.js';

/** `local`: each instance graded here, in a workspace made from --repos, inside bubblewrap. */
export const localGrader: Grader = {
  check(o) {
    if (!o.reposDir)
      throw new AlightError(
        'the local grader makes its workspaces from --repos <dir>: pass ' +
          'it, or grade in the instance images with --grader podman|docker|k8s',
        ExitCode.usage,
      );
  },
  async open(o, at, work) {
    const sandbox = await hostSandbox(o.sandboxed, at.setup, at.notice);
    return work({ kind: 'host', reposDir: o.reposDir!, sandbox });
  },
};

/**
 * The local grader's sandbox: bubblewrap (installed if missing); none, said loudly, when the user opts out with
 * --no-sandbox. (Containers and pods isolate already: they need none.)
 */
export async function hostSandbox(
  sandboxed: boolean,
  setup: SetupListener,
  notice: (line: string) => void,
): Promise<HostSandbox | null> {
  if (!sandboxed) {
    notice('grading without a sandbox (--no-sandbox): the code under test runs as you, with your files and network');
    return null;
  }
  await ensureSandbox(setup);
  return { memoryMb: defaultMemoryMb, processes: defaultProcesses };
}
