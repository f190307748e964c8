import { defineConfig } from 'vitest/config';

// The files that load models (vLLM, torch, verl, llama.cpp) and keep both cores busy.
const modelFiles = [
  'test/e2e/vllm.test.ts',
  'test/e2e/train.test.ts',
  'test/e2e/train-lora.test.ts',
  'test/e2e/train-judge.test.ts',
  'test/e2e/distill.test.ts',
  'test/e2e/judge-real.test.ts',
  'test/e2e/sft.test.ts',
  'test/e2e/verl.test.ts',
  'test/e2e/record-serve.test.ts',
  'test/e2e/models-convert.test.ts',
  'test/e2e/train-real-model.test.ts',
  'test/e2e/eval-swebench.test.ts',
  'test/integration/serve.test.ts',
  'test/integration/serve-reload.test.ts',
  // Not a model, but a whole Kubernetes cluster (~720 MiB, its own iptables rules): alone too.
  'test/e2e/k8s-runner.test.ts',
];

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
    // Two groups, one after the other. The rest (sockets, subprocesses, containers: mostly waiting) two files at a
    // time: each makes its own temp folders, stores and ports, and the installs are done before. Then the model files
    // one at a time: two of them side by side would fight over the two cores and the memory vLLM reserves.
    projects: [
      {
        test: {
          ...common,
          name: 'rest',
          include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
          exclude: [...common.exclude, ...modelFiles],
        },
      },
      { test: { ...common, name: 'models', include: modelFiles, maxWorkers: 1 } },
    ],
  },
});
