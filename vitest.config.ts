import { defineConfig } from 'vitest/config';
import { modelFiles } from './test/setup/model-files.js';
import ModelsBesideTheRest from './test/setup/sequencer.js';

const common = {
  exclude: ['dist/**', 'node_modules/**'],
  testTimeout: 60_000,
  hookTimeout: 60_000,
  pool: 'forks' as const,
};

export default defineConfig({
  test: {
    ...common,
    // Installs what the suite needs (Python environments, vLLM, podman) once, before the first test: see
    // test/setup/prepare.ts. The projects below do not repeat it.
    globalSetup: ['./test/setup/prepare.ts'],
    reporters: ['default', './test/helpers/summary-reporter.ts'],
    maxWorkers: 2,
    // Two files at a time, from one queue. The rest (sockets, subprocesses, containers: mostly waiting) need little
    // CPU; each makes its own temp folders, stores and ports, and the installs are done before. The model files take
    // turns (test/setup/one-model-file.ts): two side by side would fight over the two cores and the memory vLLM
    // reserves. The first model file starts with the rest and the others after them (test/setup/sequencer.ts), so the
    // suite takes about the model files' time, not that plus the rest's.
    sequence: { sequencer: ModelsBesideTheRest },
    projects: [
      {
        test: {
          ...common,
          name: 'rest',
          include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
          exclude: [...common.exclude, ...modelFiles],
        },
      },
      { test: { ...common, name: 'models', include: modelFiles, setupFiles: ['./test/setup/one-model-file.ts'] } },
    ],
  },
});
