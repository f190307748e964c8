// The graders, by the name --grader gives them: each is one file here and one line in `graders`. A grader checks the
// options it is given (before anything runs) and opens what its grading needs for the length of the work: a sandbox,
// an image, a session of pods; or nothing, for the official package.
import { AlightError, ExitCode } from '../../errors.js';
import type { Grader, GraderOptions, GradingAt, ReadyGrader } from '../grade/grade-types.js';
import { engineGrader } from './engine.js';
import { localGrader } from './local.js';
import { officialGrader } from './official.js';
import { podsGrader } from './pods.js';

export const graders = {
  local: localGrader,
  podman: engineGrader('podman'),
  docker: engineGrader('docker'),
  k8s: podsGrader,
  swebench: officialGrader,
} satisfies Record<string, Grader>;
export type GraderName = keyof typeof graders;
export const graderNames = Object.keys(graders) as GraderName[];

/**
 * The grader a command uses, checked and its image ready: the one named, else local with --repos, else the agents'
 * runtime (`fallback`, eval swebench's --runtime).
 */
export function chooseGrader(
  name: GraderName | undefined,
  o: GraderOptions,
  notice: (line: string) => void,
  fallback?: GraderName,
): GraderName {
  const chosen = name ?? (o.reposDir ? 'local' : fallback);
  if (!chosen)
    throw new AlightError(
      "pass --repos <dir> (workspaces made here) or --grader podman|docker|k8s|swebench (each instance's image)",
      ExitCode.usage,
    );
  graders[chosen].check(o, notice);
  return chosen;
}

export function withGrader<T>(
  name: GraderName,
  o: GraderOptions,
  at: GradingAt,
  work: (grader: ReadyGrader) => Promise<T>,
): Promise<T> {
  return graders[name].open(o, at, work);
}
