import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import type { SetupListener } from './events.js';

const me = `${hostname()} ${process.pid}`;

/** Whether the lock's holder is gone: a process of this host that no longer runs, or a file left empty for a while. */
function stale(lock: string, holder: string): boolean {
  if (holder === '') return Date.now() - statSync(lock).mtimeMs > 30_000;
  const [host, pid] = holder.split(' ');
  if (host !== hostname()) return false; // another machine's (a shared home): only its owner can tell
  try {
    process.kill(Number(pid), 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'EPERM';
  }
}

/** Holds `lock` if it is free (created here, or the stale one it replaced: renamed away by one taker only). */
function take(lock: string): { held: boolean; holder: string } {
  try {
    writeFileSync(lock, me, { flag: 'wx' });
    return { held: true, holder: me };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  let holder: string;
  try {
    holder = readFileSync(lock, 'utf8');
    if (!stale(lock, holder)) return { held: false, holder };
  } catch {
    return { held: false, holder: '?' }; // released in the meantime: try again
  }
  const away = `${lock}.stale-${process.pid}`;
  try {
    renameSync(lock, away);
  } catch {
    return { held: false, holder }; // another waiter took it over first
  }
  // Between reading and renaming, another taker may have replaced the stale lock with its live one: give it back.
  if (readFileSync(away, 'utf8') !== holder) renameSync(away, lock);
  else rmSync(away, { force: true });
  return { held: false, holder };
}

/**
 * Runs `work` holding `<path>.lock` (host and pid of the holder): two alight processes installing into one
 * environment at once would break it, so the second waits; the lock of a holder that died is taken over.
 */
export async function withLock<T>(path: string, listener: SetupListener, work: () => Promise<T>): Promise<T> {
  const lock = `${path}.lock`;
  mkdirSync(dirname(lock), { recursive: true });
  for (let waited = false; ; ) {
    const { held, holder } = take(lock);
    if (held) break;
    if (!waited)
      listener({
        type: 'step',
        message: `waiting for another alight (${holder || 'starting'}) installing into ${path}`,
      });
    waited = true;
    await new Promise((r) => setTimeout(r, 1000));
  }
  try {
    return await work();
  } finally {
    rmSync(lock, { force: true });
  }
}
