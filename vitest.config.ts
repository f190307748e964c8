import { defineConfig } from 'vitest/config';

// The files that load models (vLLM, torch, verl, llama.cpp) and keep both cores busy: one at a time, in one lane.
const modelFiles = [
  'test/e2e/vllm.test.ts',
  'test/e2e/train.test.ts',
  'test/e2e/verl.test.ts',
  'test/e2e/record-serve.test.ts',
  'test/e2e/eval-swebench.test.ts',
  'test/integration/serve.test.ts',
  'test/integration/serve-reload.test.ts',
];

export default defineConfig({
  test: {
    exclude: ['dist/**', 'node_modules/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Installs what the suite needs (Python environments, vLLM, podman) before the first test: see test/setup/prepare.ts.
    globalSetup: ['./test/setup/prepare.ts'],
    pool: 'forks',
    reporters: ['default', './test/helpers/summary-reporter.ts'],
    // Two lanes side by side, each one file at a time: the model files in one, the rest (containers, subprocesses,
    // sockets: mostly waiting) in the other. Two model files together would fight over the two cores and the memory
    // vLLM reserves; every file makes its own temp folders, stores and ports, and the installs are done before.
    projects: [
      {
        extends: true,
        test: { name: 'models', include: modelFiles, fileParallelism: false },
      },
      {
        extends: true,
        test: {
          name: 'rest',
          include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
          exclude: ['dist/**', 'node_modules/**', ...modelFiles],
          fileParallelism: false,
        },
      },
    ],
  },
});
