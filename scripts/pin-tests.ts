// Writes test/expected-tests.json: each test file's number of tests, as `vitest list` collects them. The whole suite
// (ALIGHT_FULL_SUITE=1, which `npm test` sets) fails when a file runs more or fewer (test/helpers/summary-reporter.ts):
// run this after adding or removing tests, and the diff shows what changed.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { packageRoot } from '../src/package-root.js';
import { pinFile } from '../test/helpers/summary-reporter.js';

const dir = mkdtempSync(join(tmpdir(), 'alight-pin-'));
try {
  const out = join(dir, 'list.json');
  execFileSync(process.execPath, [join(packageRoot, 'node_modules', 'vitest', 'vitest.mjs'), 'list', `--json=${out}`], {
    cwd: packageRoot,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const counts: Record<string, number> = {};
  for (const t of JSON.parse(readFileSync(out, 'utf8')) as { file: string }[]) {
    const file = relative(packageRoot, t.file);
    counts[file] = (counts[file] ?? 0) + 1;
  }
  const sorted = Object.fromEntries(Object.entries(counts).sort(([a], [b]) => a.localeCompare(b)));
  writeFileSync(pinFile, `${JSON.stringify(sorted, null, 2)}\n`);
  const total = Object.values(sorted).reduce((a, b) => a + b, 0);
  process.stdout.write(`${relative(packageRoot, pinFile)}: ${total} tests in ${Object.keys(sorted).length} files\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
