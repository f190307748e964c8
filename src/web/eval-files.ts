import { closeSync, existsSync, openSync, readdirSync, readFileSync, readSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { compareRuns } from '../eval/run/compare.js';
import type { Store } from '../store/store.js';

const logMax = 256 << 10;

/** Where `eval swebench` wrote a run's files by default (`--out` elsewhere is not found). */
const evalDir = (store: Store, run: string): string => join(dirname(store.path), 'runs', run, 'eval');

interface SavedAttempt {
  instance_id: string;
  attempt: number;
  rollout_id: string | null;
  prediction: { model_patch: string | null };
  report: { status: string; error: string | null; guard: { file: string; reason: string; removed: boolean }[] };
  seconds?: number | null;
}

/**
 * An eval run as its files hold it: the summary and every attempt (status, flags, reason, the diff, the rollout);
 * null when the run has no eval folder.
 */
export function evalRun(store: Store, run: string) {
  const dir = evalDir(store, run);
  if (!/^[\w.-]+$/.test(run) || !existsSync(join(dir, 'summary.json'))) return null;
  const attempts = existsSync(join(dir, 'attempts'))
    ? readdirSync(join(dir, 'attempts'))
        .filter((f) => f.endsWith('.json'))
        .map((f) => JSON.parse(readFileSync(join(dir, 'attempts', f), 'utf8')) as SavedAttempt)
        .sort((a, b) => a.instance_id.localeCompare(b.instance_id) || a.attempt - b.attempt)
    : [];
  return {
    summary: JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')),
    attempts: attempts.map((a) => ({
      instance_id: a.instance_id,
      attempt: a.attempt,
      rollout_id: a.rollout_id,
      status: a.report.status,
      error: a.report.error,
      flags: a.report.guard,
      seconds: a.seconds ?? null,
      patch: a.prediction.model_patch,
    })),
  };
}

/** The last 256 KiB of an attempt's test log, or null. Ids and numbers only: no path comes from the request. */
export function testLog(store: Store, run: string, instance: string, attempt: number): string | null {
  if (![run, instance].every((s) => /^[A-Za-z0-9][\w.-]*$/.test(s)) || !Number.isInteger(attempt)) return null;
  const file = join(evalDir(store, run), `attempt-${attempt}`, instance, 'test_output.txt');
  if (!existsSync(file)) return null;
  const size = statSync(file).size;
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.alloc(Math.min(size, logMax));
    readSync(fd, buf, 0, buf.length, size - buf.length);
    return (size > logMax ? '… (the start cut)\n' : '') + buf.toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** Two eval runs paired per instance (eval compare's numbers), or null if either has no summary. */
export function comparison(store: Store, a: string, b: string) {
  const [ra, rb] = [evalRun(store, a), evalRun(store, b)];
  return ra && rb ? { a, b, ...compareRuns(ra.summary, rb.summary) } : null;
}
