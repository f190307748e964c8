import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { modelFiles } from './model-files.js';

/**
 * The order the files start in, two at a time: the first model file, then every other file, then the other model
 * files. Model files take turns (test/setup/one-model-file.ts), so the first runs beside the rest, and a model file
 * that waits for its turn holds a worker only once nothing else is left to run.
 */
export default class ModelsBesideTheRest extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const turn = (f: TestSpecification) => modelFiles.indexOf(relative(f.project.config.root, f.moduleId));
    const models = sorted.filter((f) => f.project.name === 'models').sort((a, b) => turn(a) - turn(b));
    const rest = sorted.filter((f) => f.project.name !== 'models');
    return [...models.slice(0, 1), ...rest, ...models.slice(1)];
  }
}
