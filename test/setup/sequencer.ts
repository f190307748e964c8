import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { modelFiles } from './model-files.js';

/**
 * The order the files start in, two at a time. Model files take turns (test/setup/one-model-file.ts), so the suite
 * takes at least their total time, and every other file should run in its shadow, on the other worker:
 * - with each file's time in the last run (vitest's results cache, kept under ~/.cache/alight), the order two workers
 *   taking files from one queue would take them in, each taking the next model file when the turn is free and the
 *   longest other file when it is not. Times that differ from the last run's cost little: a worker that takes a model
 *   file early waits for its turn (idle, but beside the critical path); one that frees early takes another file.
 * - without them (a first run), the first model file, then every other file, then the other model files.
 */
export default class ModelsBesideTheRest extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const turn = (f: TestSpecification) => modelFiles.indexOf(relative(f.project.config.root, f.moduleId));
    const models = sorted.filter((f) => f.project.name === 'models').sort((a, b) => turn(a) - turn(b));
    const rest = sorted.filter((f) => f.project.name !== 'models');
    const last = (f: TestSpecification): number | undefined =>
      this.ctx.cache.getFileTestResults(`${f.project.name}:${relative(this.ctx.config.root, f.moduleId)}`)?.duration;
    if (!files.some((f) => last(f) !== undefined)) return [...models.slice(0, 1), ...rest, ...models.slice(1)];
    // A file new since the last run counts as long as the average of its kind.
    const [m, r] = [models, rest].map(averageOf(last));
    const time = (f: TestSpecification) => last(f) ?? (f.project.name === 'models' ? m : r);
    return schedule(models, rest, time, this.ctx.config.maxWorkers);
  }
}

const averageOf =
  <T>(time: (f: T) => number | undefined) =>
  (files: T[]): number => {
    const known = files.map(time).filter((t) => t !== undefined);
    return known.reduce((a, t) => a + t, 0) / Math.max(1, known.length);
  };

/** The queue, from a run of the workers on the files' last times; the model turn frees when its file ends. */
function schedule<T>(models: T[], rest: T[], time: (f: T) => number, workers: number): T[] {
  const [queue, m, r] = [[] as T[], [...models], [...rest].sort((a, b) => time(b) - time(a))];
  const free = Array<number>(workers).fill(0);
  let turn = 0;
  while (m.length + r.length > 0) {
    const w = free.indexOf(Math.min(...free));
    const model = m.length > 0 && (turn <= free[w] || r.length === 0);
    const file = model ? m.shift()! : r.shift()!;
    free[w] = (model ? Math.max(free[w], turn) : free[w]) + time(file);
    if (model) turn = free[w];
    queue.push(file);
  }
  return queue;
}
