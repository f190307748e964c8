import { existsSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';
import { packageRoot } from '../../src/package-root.js';

/** Each test file's number of tests, as the whole suite should run them (`npm run test:pin` writes it). */
export const pinFile = join(packageRoot, 'test', 'expected-tests.json');

/**
 * Ends every run with the plain `N passed, N failed` line that CI reads. A hook that failed (a `beforeAll` whose tests
 * were then skipped, an `afterAll` after they passed) is a failure, named. In the whole suite (`npm test` sets
 * ALIGHT_FULL_SUITE), so is a skipped test, and so is a file that ran more or fewer tests than
 * test/expected-tests.json pins, or did not run at all: a test that stops running cannot go unnoticed.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>, errors: ReadonlyArray<unknown>): void {
    const full = process.env.ALIGHT_FULL_SUITE === '1';
    const problems: string[] = errors.map((e) => `run error: ${(e as Error)?.message ?? e}`);
    let passed = 0;
    let skipped = 0;
    let failedTests = 0;
    const ran: Record<string, number> = {};
    for (const module of modules) {
      const file = relative(packageRoot, module.moduleId);
      const tests = [...module.children.allTests()];
      ran[file] = tests.length;
      // A file that fails to load has no tests to count: count the file.
      if (tests.length === 0 && module.state() === 'failed') problems.push(`${file}: failed to load`);
      for (const where of [module, ...module.children.allSuites()])
        for (const e of where.errors())
          problems.push(`${file}: hook failed${'name' in where ? ` in "${where.name}"` : ''}: ${e.message}`);
      for (const test of tests) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failedTests++;
        else if (full) problems.push(`${file}: skipped in the whole suite: ${test.fullName}`);
        else skipped++;
      }
    }
    if (full) problems.push(...countProblems(ran));
    if (problems.length) process.stdout.write(`\n${problems.map((p) => `FAIL ${p}`).join('\n')}\n`);
    const failed = failedTests + problems.length;
    process.stdout.write(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
    if (problems.length) process.exitCode = 1;
  }
}

/** Files whose count of tests is not the pinned one, and pinned files that did not run. */
function countProblems(ran: Record<string, number>): string[] {
  if (!existsSync(pinFile)) return [`no ${relative(packageRoot, pinFile)}: run npm run test:pin`];
  const pinned = JSON.parse(readFileSync(pinFile, 'utf8')) as Record<string, number>;
  const out: string[] = [];
  for (const [file, n] of Object.entries(pinned))
    if (!(file in ran)) out.push(`${file}: did not run (${n} tests pinned)`);
    else if (ran[file] !== n)
      out.push(`${file}: ${ran[file]} tests ran, ${n} pinned (npm run test:pin after adding or removing tests)`);
  for (const file of Object.keys(ran))
    if (!(file in pinned)) out.push(`${file}: not pinned (npm run test:pin after adding a test file)`);
  return out;
}
