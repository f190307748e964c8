import {
  createReadStream,
  createWriteStream,
  mkdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import type { GradePod, GradePods } from '../../k8s/grade-pods.js';
import type { ExecIo } from '../../k8s/pod-exec.js';
import { run } from '../../process/launch.js';
import { OutputTail } from '../../process/tail.js';
import type { ImageSite, OpenSite, SiteRun } from './grade-types.js';
import { scriptLog } from './run-script.js';

// Copying /testbed either way is not the tests' time, but it has an end.
const copyTimeoutMs = 10 * 60_000;

/**
 * How long a grading pod may live, counted from its creation: its wait to run (`pendingS`, a pull included), the
 * tests' limit, and each of the other exec steps (the copy out, the removals, the copy back, eval.sh, the results) at
 * its limit.
 */
export const podDeadlineS = (testTimeoutS: number, pendingS: number): number =>
  pendingS + testTimeoutS + (5 * copyTimeoutMs) / 1000 + 120;

/**
 * Each grade in a fresh pod of the instance's image (grade-pods.ts: no credential, a deny-all NetworkPolicy): its
 * /testbed streamed out with tar over exec, the judged tree's changes streamed back in, the eval script run by exec.
 */
export const podSite =
  (pods: GradePods, deadlineS: number): OpenSite =>
  async (task): Promise<ImageSite> => {
    const pod = await pods.open(task.image!, task.instance_id, deadlineS);
    return {
      copyTestbed: (dest) => copyOut(pod, dest),
      runTests: (r) => testInPod(pod, r),
      close: () => pod.delete(),
    };
  };

/** A text sink that keeps the tail (an error's last words; the tests' log up to its cap). */
function tailSink(max: number): { stream: Writable; tail: OutputTail } {
  const tail = new OutputTail(max);
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      tail.push(chunk);
      done();
    },
  });
  return { stream, tail };
}

/** One step of the grade in the pod; a non-zero exit is the grade's error, with what the step printed. */
async function step(pod: GradePod, what: string, command: string[], io: ExecIo = {}): Promise<void> {
  const err = tailSink(4096);
  const r = await pod.exec(command, { stderr: err.stream, timeoutMs: copyTimeoutMs, ...io });
  if (r.exitCode === 0) return;
  const said = err.tail.text().trim().split('\n').slice(-3).join(' ');
  throw new Error(
    `${what} in the grading pod failed: ${r.reason ?? `exit code ${r.exitCode}`}${said ? `: ${said}` : ''}`,
  );
}

async function tar(args: string[]): Promise<void> {
  const r = await run({ command: 'tar', args, stdout: 'ignore', stderr: { tail: 4096 }, timeoutMs: copyTimeoutMs });
  if (r.exitCode !== 0) throw new Error(`tar ${args.join(' ')} failed: ${(r.stderr || r.reason || '').trim()}`);
}

async function copyOut(pod: GradePod, dest: string): Promise<void> {
  const archive = `${dest}.tar`;
  try {
    await step(pod, 'reading /testbed', ['tar', '-C', '/testbed', '-cf', '-', '.'], {
      stdout: createWriteStream(archive),
    });
    mkdirSync(dest);
    await tar(['-C', dest, '-xf', archive]);
  } finally {
    rmSync(archive, { force: true });
  }
}

/**
 * The judged tree into the pod's /testbed (every changed path removed, then the ones that exist written), eval.sh
 * beside it, alight's pytest plugin and key in /alight/results, the tests run; the plugin's record brought back as it
 * is, so readResults judges it as for a container.
 */
async function testInPod(pod: GradePod, r: SiteRun): Promise<string> {
  if (r.changed.length)
    await step(pod, 'removing the changed paths', ['sh', '-c', 'cd /testbed && xargs -0 -r rm -rf --'], {
      stdin: Readable.from([Buffer.from(r.changed.join('\0'))]),
    });
  if (r.written.length) {
    const list = join(r.dir, 'written.list');
    const archive = join(r.dir, 'written.tar');
    writeFileSync(list, r.written.join('\0'));
    await tar(['-C', r.ws, '--no-recursion', '--null', '-T', list, '-cf', archive]);
    await step(pod, 'writing the judged tree', ['tar', '-C', '/testbed', '-xpf', '-'], {
      stdin: createReadStream(archive),
    });
  }
  await step(pod, 'writing eval.sh', ['sh', '-c', 'mkdir -p /alight/results && cat > /alight/eval.sh'], {
    stdin: Readable.from([readFileSync(join(r.dir, 'eval.sh'))]),
  });
  // alight's pytest plugin and its key (pytest-results.ts), as a container gets them through its mount.
  const prepared = join(r.dir, 'results.tar');
  await tar(['-C', r.results, '-cf', prepared, '.']);
  await step(pod, 'writing the results folder', ['tar', '-C', '/alight/results', '-xf', '-'], {
    stdin: createReadStream(prepared),
  });
  rmSync(prepared, { force: true });
  const out = tailSink(r.maxOutputBytes);
  const ran = await pod.exec(['bash', '-c', `exec 2>&1\n${r.script}`], { stdout: out.stream, timeoutMs: r.timeoutMs });
  const timedOut = ran.reason === 'timeout';
  if (ran.exitCode === null && !timedOut) throw new Error(`the tests in the grading pod: ${ran.reason}`);
  if (!timedOut) await fetchResults(pod, r.results);
  return scriptLog(out.tail.text(), out.tail.truncated, timedOut, ran.exitCode);
}

// 3: something other than a plain file is there (a link the code under test made); 4: nothing is.
const readResultsFile =
  'f=/alight/results/results.json; if [ -L "$f" ] || { [ -e "$f" ] && [ ! -f "$f" ]; }; then exit 3; fi; ' +
  '[ -f "$f" ] || exit 4; exec cat "$f"';

async function fetchResults(pod: GradePod, results: string): Promise<void> {
  const file = join(results, 'results.json');
  const r = await pod.exec(['sh', '-c', readResultsFile], {
    stdout: createWriteStream(file),
    timeoutMs: copyTimeoutMs,
  });
  if (r.exitCode === 0) return;
  rmSync(file, { force: true });
  if (r.exitCode === 3) symlinkSync('not-a-plain-file', file);
  else if (r.exitCode !== 4)
    throw new Error(`reading the results record in the grading pod: ${r.reason ?? r.exitCode}`);
}
