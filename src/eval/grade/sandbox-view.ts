import { existsSync, lstatSync, readlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';

/**
 * What the code under test sees in the local grader's sandbox, built up rather than carved out: the system's programs
 * and libraries, the few files of /etc that programs read to run, and the test interpreter's prefixes, all read-only;
 * an environment of named variables only. Anything not named here (the real HOME and its caches, `--repos`, the
 * project's store, the rest of /etc, the grader's environment and its secrets) does not exist inside, wherever it
 * lives, so a new place to hide a secret needs no new rule.
 */

/** The system's own folders (merged-/usr systems keep /bin, /lib… as links into /usr: they stay links). */
const systemPaths = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/**
 * What programs read from /etc to run: the loader's cache, users and groups by name, name resolution of localhost,
 * certificates, the time zone, the locale's aliases, alternatives' links, the system's name. Not the rest: /etc holds
 * the host's keys, credentials and configuration.
 */
const etcPaths = [
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'alternatives',
  'passwd',
  'group',
  'nsswitch.conf',
  'hosts',
  'host.conf',
  'ssl',
  'ca-certificates',
  'localtime',
  'timezone',
  'mime.types',
  'locale.alias',
  'os-release',
  'debian_version',
  'fonts',
].map((p) => `/etc/${p}`);

/** bwrap's arguments that show `paths` read-only (a link as the same link); those that do not exist are left out. */
function readOnlyView(paths: string[]): string[] {
  return [...new Set(paths)].flatMap((p) => {
    if (isLink(p)) return ['--symlink', readlinkSync(p), p];
    return existsSync(p) ? ['--ro-bind', p, p] : [];
  });
}

function isLink(p: string): boolean {
  try {
    return lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

/** The runtime's view: the system, /etc's files, the interpreter's prefixes (outside the system's folders). */
export function runtimeView(prefixes: string[]): string[] {
  const own = prefixes.filter((p) => !systemPaths.some((s) => p === s || p.startsWith(`${s}/`)));
  return readOnlyView([...systemPaths, ...etcPaths, ...own]);
}

/** The home the code under test gets: empty, in its private /tmp. */
export const privateHome = '/tmp/home';

/**
 * The environment the code under test starts with, whole: nothing of the grader's is passed on. A fixed locale, so
 * that a grade does not depend on the grading machine's. The test script adds its own (the interpreter first on PATH,
 * alight's plugin).
 */
export function sandboxEnv(): Record<string, string> {
  return {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: privateHome,
    TMPDIR: tmpdir(),
    LANG: 'C.UTF-8',
  };
}
