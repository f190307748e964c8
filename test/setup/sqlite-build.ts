import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { packageRoot } from '../../src/package-root.js';
import { probe } from '../../src/process/launch.js';

interface PrebuildUtil {
  getDownloadUrl(opts: Record<string, unknown>): string;
  cachedPrebuild(url: string): string;
}

/**
 * Leaves this checkout's build of better-sqlite3 where prebuild-install looks before it downloads one (npm's cache,
 * `_prebuilds/`, keyed by the release's URL), packed as the release packs it. Where GitHub cannot be reached, every
 * `npm ci` otherwise compiles SQLite from source: ~60 s on one core, half of `npm ci`'s time on a warm machine. The next
 * `npm ci` unpacks it instead, and prebuild-install loads it to check before keeping it (a binary that does not load
 * falls back to the compile). Nothing is written on a machine that already has one (one that downloaded it, or a run
 * before), nor for musl, whose builds are named apart.
 */
export function keepSqliteBuild(): void {
  const require = createRequire(join(packageRoot, 'package.json'));
  const dir = dirname(require.resolve('better-sqlite3/package.json'));
  const binary = join(dir, 'build', 'Release', 'better_sqlite3.node');
  const header = (process.report.getReport() as { header: { glibcVersionRuntime?: string } }).header;
  if (!existsSync(binary) || (process.platform === 'linux' && !header.glibcVersionRuntime)) return;
  const util = createRequire(join(dir, 'package.json'))('prebuild-install/util') as PrebuildUtil;
  const url = util.getDownloadUrl({
    pkg: require('better-sqlite3/package.json'),
    runtime: 'node',
    abi: process.versions.modules,
    platform: process.platform,
    arch: process.arch,
    'tag-prefix': 'v',
  });
  const cached = util.cachedPrebuild(url);
  if (existsSync(cached)) return;
  mkdirSync(dirname(cached), { recursive: true });
  const partial = `${cached}.${process.pid}.partial`;
  // A cache, not an install: where it cannot be written (no tar, a read-only cache), npm ci compiles as before.
  if (probe('tar', ['-czf', partial, '-C', dir, join('build', 'Release', 'better_sqlite3.node')]).exitCode === 0)
    renameSync(partial, cached);
  else rmSync(partial, { force: true });
}
