import { defineConfig } from 'vitest/config';

// `npm run test:unit`: the fast tests alone (pure functions and in-process parts, no Python, engines or containers),
// so without the suite's set-up.
export default defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts', 'test/unit/**/*.test.tsx'],
    testTimeout: 60_000,
  },
});
