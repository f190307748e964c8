import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
    exclude: ['dist/**', 'node_modules/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Installs what the suite needs (Python environments, vLLM, podman) before the first test: see test/setup/prepare.ts.
    globalSetup: ['./test/setup/prepare.ts'],
    pool: 'forks',
    // One file at a time on every machine (the default on two cores): the end-to-end files train models, start vLLM,
    // Ray and containers, share ~/.cache/alight's virtualenvs, and time harnesses; side by side they would race.
    fileParallelism: false,
    reporters: ['default', './test/helpers/summary-reporter.ts'],
  },
});
