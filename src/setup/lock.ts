import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { SetupListener } from './events.js';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Runs `work` holding `<path>.lock` (a file with the holder's pid): two alight processes installing into one
 * environment at once would break it, so the second waits; a lock whose holder has died is taken over.
 */
export async function withLock<T>(path: string, listener: SetupListener, work: () => Promise<T>): Promise<T> {
  const lock = `${path}.lock`;
  mkdirSync(dirname(lock), { recursive: true });
  for (let waited = false; ;) {
    try {
      writeFileSync(lock, String(process.pid), { flag: 'wx' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = Number(readFileSync(lock, 'utf8'));
    // An empty file is a holder between creating and writing it: wait for it like any other.
    if (holder > 0 && !alive(holder)) {
      rmSync(lock, { force: true });
      continue;
    }
    if (!waited) listener({ type: 'step', message: `waiting for another alight (pid ${holder || '?'}) installing into ${path}` });
    waited = true;
    await new Promise((r) => setTimeout(r, 1000));
  }
  try {
    return await work();
  } finally {
    rmSync(lock, { force: true });
  }
}
