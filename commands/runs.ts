import { writeFileSync } from 'node:fs';
import { AlightError, ExitCode } from '../src/errors.js';
import type { RunListing, TrainStepRow } from '../src/store/store.js';
import { renderRunList, renderRunPlot, renderRunSteps } from '../src/ui/runs-report.js';
import { printJson, withStore } from './shared.js';
import type { RunShowFlags, RunsListFlags } from './table/declared-traces.js';

export async function listRuns(opts: RunsListFlags): Promise<RunListing[]> {
  return withStore(opts, (store) => {
    const runs = store.listRuns();
    if (opts.json) printJson(runs);
    else if (runs.length === 0) process.stdout.write(`no runs in ${store.path}\n`);
    else process.stdout.write(renderRunList(runs));
    return runs;
  });
}

/** A training run's metrics per step, and a reward / loss plot when asked. */
export async function showRun(
  run: string,
  opts: RunShowFlags,
): Promise<{ run: string; steps: TrainStepRow[]; plot: string | null }> {
  if (opts.plot && !opts.plot.endsWith('.svg'))
    throw new AlightError(`--plot writes SVG: name the file *.svg (got ${opts.plot})`, ExitCode.usage);
  return withStore(opts, (store) => {
    if (!store.getRun(run)) throw new AlightError(`no run ${run} in ${store.path} (alight runs list)`, ExitCode.input);
    const steps = store.trainSteps(run);
    if (steps.length === 0)
      throw new AlightError(
        `run ${run} has no training steps (a record run? alight traces list --run ${run})`,
        ExitCode.input,
      );
    if (opts.plot) writeFileSync(opts.plot, renderRunPlot(run, steps));
    const result = { run, steps, plot: opts.plot ?? null };
    if (opts.json) printJson(result);
    else process.stdout.write(renderRunSteps(steps, result.plot));
    return result;
  });
}
