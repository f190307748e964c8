import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/package-root.js';
import { asLines, type SetupEvent } from '../../src/setup/events.js';
import { withLock } from '../../src/setup/lock.js';
import { commandNeed, ensureSystemPackages } from '../../src/setup/system.js';
import { tempDir } from '../helpers/gateway.js';

const MB = 1024 * 1024;

describe('set-up', () => {
  it('installs nothing when every needed command is there', async () => {
    const events: SetupEvent[] = [];
    await ensureSystemPackages([commandNeed('sh', 'dash'), commandNeed('git', 'git')], 'a test', (e) => events.push(e));
    expect(events).toEqual([]);
  });

  // setpriv needs root to become another user; CI runs as root.
  it.runIf(process.getuid?.() === 0)(
    'without root or password-less sudo, stops with the one command to run (as a user with no rights, for real)',
    () => {
      // A copy of the built modules where that user can read them (the clone may sit in a folder only root can enter).
      const copy = tempDir();
      cpSync(join(packageRoot, 'dist', 'src', 'setup'), join(copy, 'src', 'setup'), { recursive: true });
      cpSync(join(packageRoot, 'dist', 'src', 'errors.js'), join(copy, 'src', 'errors.js'));
      cpSync(join(packageRoot, 'dist', 'src', 'process'), join(copy, 'src', 'process'), { recursive: true });
      for (const pkg of dependencyClosure('execa')) {
        cpSync(join(packageRoot, 'node_modules', pkg), join(copy, 'node_modules', pkg), { recursive: true });
      }
      execFileSync('chmod', ['-R', 'a+rX', copy]);
      const script = `import('${copy}/src/setup/system.js').then((m) => m.ensureSystemPackages(
      [m.commandNeed('alight-no-such-tool', 'alight-no-such-pkg'), m.commandNeed('sh', 'dash')], 'the test', () => {}))
      .then(() => console.log('installed?'), (e) => console.log(e.constructor.name + ': ' + e.message))`;
      const res = spawnSync(
        'setpriv',
        ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, '-e', script],
        { encoding: 'utf8', env: { PATH: process.env.PATH, HOME: '/nonexistent' } },
      );
      expect(res.status, res.stderr).toBe(0);
      expect(res.stdout.trim()).toBe(
        'AlightError: the test needs alight-no-such-pkg, not installed, and alight cannot install system packages ' +
          'without a password; install them with: sudo apt-get install -y --no-install-recommends alight-no-such-pkg',
      );
    },
  );

  it('reports a long download as lines at its start and each quarter, and a short one not at all', () => {
    const lines: string[] = [];
    const listener = asLines((l) => lines.push(l));
    for (let done = 0; done <= 100; done += 5)
      listener({ type: 'download', file: 'torch.whl', done: done * MB, total: 100 * MB });
    listener({ type: 'download', file: 'small.whl', done: MB, total: 2 * MB });
    listener({ type: 'step', message: 'installing' });
    expect(lines).toEqual([
      '  torch.whl: 0/100 MB',
      '  torch.whl: 25/100 MB',
      '  torch.whl: 50/100 MB',
      '  torch.whl: 75/100 MB',
      '  torch.whl: 100/100 MB',
      'installing',
    ]);
  });

  it('lets one installer at a time into an environment, and takes over the lock of one that died', async () => {
    const path = join(tempDir(), 'env');
    const order: string[] = [];
    const events: SetupEvent[] = [];
    const job = (name: string) =>
      withLock(
        path,
        (e) => events.push(e),
        async () => {
          order.push(`${name} in`);
          await new Promise((r) => setTimeout(r, 300));
          order.push(`${name} out`);
        },
      );
    await Promise.all([job('a'), job('b')]);
    expect(order).toEqual(['a in', 'a out', 'b in', 'b out']);
    expect(events).toEqual([
      { type: 'step', message: `waiting for another alight (${hostname()} ${process.pid}) installing into ${path}` },
    ]);
    const dead = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' }).stdout.trim();
    writeFileSync(`${path}.lock`, `${hostname()} ${dead}`);
    await job('c');
    expect(order.at(-1)).toBe('c out');
  });
});

/** A package and every package it needs, as npm installed them (flat, under the root's node_modules). */
function dependencyClosure(name: string, seen = new Set<string>()): Set<string> {
  if (seen.has(name)) return seen;
  seen.add(name);
  const manifest = JSON.parse(readFileSync(join(packageRoot, 'node_modules', name, 'package.json'), 'utf8'));
  for (const dep of Object.keys(manifest.dependencies ?? {})) dependencyClosure(dep, seen);
  return seen;
}
