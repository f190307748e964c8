import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * A bound on the processes of one grade (a fork bomb in the code under test must not take the machine). Root is exempt
 * from RLIMIT_NPROC, so where a pids cgroup can be made (cgroup v1's pids hierarchy, or v2 with the pids controller
 * enabled at the root) the grade runs in one of its own, which also lets every process of it be killed at the end;
 * otherwise a user's grade gets `ulimit -u`: the limit over what the user already runs (that rlimit counts all of
 * them).
 */
export interface ProcessLimit {
  /** Before the command: moves the shell into the cgroup, then execs the command. */
  prefix: string[];
  /** Shell lines for inside the sandbox (the rlimit), or empty. */
  shell: string;
  /** Kills whatever is left in the cgroup and removes it. */
  release(): Promise<void>;
}

function pidsRoot(): string | null {
  const v1 = '/sys/fs/cgroup/pids';
  if (existsSync(join(v1, 'cgroup.procs'))) return v1;
  const read = (f: string): string => {
    try {
      return readFileSync(join('/sys/fs/cgroup', f), 'utf8');
    } catch {
      return '';
    }
  };
  return /\bpids\b/.test(read('cgroup.subtree_control')) ? '/sys/fs/cgroup' : null;
}

function ownProcesses(): number {
  const mine = new RegExp(`^Uid:\\s+${process.getuid?.() ?? 0}\\b`, 'm');
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((pid) => {
      try {
        return mine.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
      } catch {
        return false;
      }
    }).length;
}

const none: ProcessLimit = { prefix: [], shell: '', release: async () => {} };

export function processLimit(max: number, name: string): ProcessLimit {
  const root = pidsRoot();
  const dir = root && join(root, name);
  try {
    if (!dir) throw new Error('no pids cgroup');
    mkdirSync(dir);
    writeFileSync(join(dir, 'pids.max'), String(max));
  } catch {
    if (process.getuid?.() === 0) return none; // root without a cgroup: nothing bounds it (the README says so)
    return { ...none, shell: `ulimit -u ${ownProcesses() + max}\n` };
  }
  return {
    prefix: ['sh', '-c', `echo $$ > ${join(dir, 'cgroup.procs')} && exec "$@"`, 'sh'],
    shell: '',
    release: () => emptyAndRemove(dir),
  };
}

async function emptyAndRemove(dir: string): Promise<void> {
  for (let tries = 0; tries < 50; tries++) {
    try {
      for (const pid of readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean)) {
        try {
          process.kill(Number(pid), 'SIGKILL');
        } catch {
          /* gone */
        }
      }
      rmdirSync(dir);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      await sleep(20); // the killed processes are still being reaped
    }
  }
}
