import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll } from 'vitest';
import { alive } from './temp-root.js';

// A setup file of the `models` project: its files run one at a time, each beside the other files of the suite. Two
// of them side by side would fight over the two cores and the memory vLLM reserves; one of them beside a file that
// mostly waits (sockets, subprocesses, containers) costs little. The lock is a folder in the run's temp root
// (test/setup/temp-root.ts) naming its holder; a holder that died without letting go (a crashed worker) is passed over.
const lock = join(process.env.TMPDIR ?? '/tmp', 'model-file.lock');
const owner = join(lock, 'pid');

const holderAlive = (): boolean => alive(Number(readFileSync(owner, 'utf8')));

async function acquire(): Promise<void> {
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(owner, String(process.pid));
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    // A holder between making the folder and naming itself reads as no file: wait for it like any other.
    let stale = false;
    try {
      stale = !holderAlive();
    } catch {}
    if (stale) rmSync(lock, { recursive: true, force: true });
    else await sleep(500);
  }
}

/** Lets go if this process holds the lock: a worker process runs file after file, and may exit while another holds it. */
function release(): void {
  try {
    if (Number(readFileSync(owner, 'utf8')) !== process.pid) return;
  } catch {
    return;
  }
  rmSync(lock, { recursive: true, force: true });
}

await acquire();
afterAll(release);
process.once('exit', release);
