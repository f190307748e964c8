import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { probe, run, start } from '../../src/process/launch.js';
import { tempDir } from '../helpers/gateway.js';
import { waitFor } from '../helpers/train-project.js';

// What these tests must not wait for (a sleeper that escaped the group, a grandchild that ignores SIGTERM) runs for
// 10 minutes, past the test's timeout: a launcher that waited for it fails the test without any bound on durations.

// Running, not a zombie waiting for a reaper (this machine's PID 1 may never reap).
const alive = (pid: number): boolean => {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

describe('the process launcher', () => {
  it('captures a tail, merges stderr into it on request and marks what it cut', async () => {
    const r = await run({
      command: 'sh',
      args: ['-c', 'head -c 5000 /dev/zero | tr "\\0" a; echo; echo to-stderr >&2; exit 3'],
      stdout: { tail: 100 },
      stderr: 'stdout',
    });
    expect(r.exitCode).toBe(3);
    expect(r.reason).toBeNull();
    expect(r.truncated).toBe(true);
    expect(r.stdout.length).toBeLessThanOrEqual(100);
    expect(r.stdout).toMatch(/a+\nto-stderr\n$/);
  });

  it('appends output to files and hands lines over as they come', async () => {
    const dir = tempDir();
    const out = join(dir, 'out.log');
    await run({ command: 'sh', args: ['-c', 'echo one; echo err >&2'], stdout: { file: out }, stderr: { file: out } });
    await run({ command: 'sh', args: ['-c', 'echo two'], stdout: { file: out } });
    expect(readFileSync(out, 'utf8').split('\n').sort()).toEqual(['', 'err', 'one', 'two']);
    const lines: string[] = [];
    await run({
      command: 'sh',
      args: ['-c', 'printf "a\\nb\\n"; echo c >&2'],
      stdout: { lines: (l) => lines.push(l) },
    });
    expect(lines).toEqual(['a', 'b']);
  });

  it('ends the whole process group at the timeout, what ignores SIGTERM included', async () => {
    const dir = tempDir();
    const pidFile = join(dir, 'grandchild');
    // The grandchild ignores SIGTERM: only the SIGKILL after the grace ends it.
    const r = await run({
      command: 'sh',
      args: ['-c', `sh -c 'trap "" TERM; echo $$ > ${pidFile}; sleep 600' & wait`],
      group: true,
      timeoutMs: 300,
      killGraceMs: 500,
    });
    expect(r.reason).toBe('timeout');
    const grandchild = Number(readFileSync(pidFile, 'utf8'));
    await waitFor(() => !alive(grandchild), 30_000);
  });

  it('stops on the abort signal with its reason, and calls onStop once', async () => {
    const abort = new AbortController();
    let stops = 0;
    const running = start({
      command: 'sleep',
      args: ['30'],
      group: true,
      signal: abort.signal,
      onStop: () => stops++,
    });
    setTimeout(() => abort.abort('cancelled by the test'), 100);
    const r = await running.finished;
    expect(r.reason).toBe('cancelled by the test');
    expect(stops).toBe(1);
    expect(running.exited()).toBe(true);
    const ctrlC = new AbortController();
    ctrlC.abort();
    expect((await run({ command: 'sleep', args: ['30'], signal: ctrlC.signal })).reason).toBe('interrupted');
  });

  it('is not held by a background process that left the group with a pipe open', async () => {
    const pidFile = join(tempDir(), 'escaped');
    const r = await run({
      command: 'sh',
      args: ['-c', `echo done; setsid sleep 600 & echo $! > ${pidFile}; exit 0`],
      stdout: { tail: 1000 },
      group: true,
    });
    expect(r).toMatchObject({ exitCode: 0, reason: null, stdout: 'done\n' });
    process.kill(Number(readFileSync(pidFile, 'utf8')), 'SIGKILL');
  });

  it('is not held by an escaped process that writes to its log file or prints without end', async () => {
    const dir = tempDir();
    const [log, go] = [join(dir, 'harness.log'), join(dir, 'go')];
    const toFile = await run({
      command: 'sh',
      // The escaped writer waits for the test's word, so a launcher that waited for it would never return. The leader
      // waits a moment: a child not yet past setsid() is still in the group, and goes with it.
      args: [
        '-c',
        `echo first; setsid sh -c "while [ ! -e ${go} ]; do sleep 0.05; done; echo later" & sleep 0.2; exit 0`,
      ],
      stdout: { file: log },
      stderr: { file: log },
      group: true,
    });
    expect(toFile).toMatchObject({ exitCode: 0, reason: null });
    writeFileSync(go, '');
    await waitFor(() => readFileSync(log, 'utf8') === 'first\nlater\n', 30_000);
    const chatty = await run({
      command: 'sh',
      args: ['-c', 'setsid sh -c "while true; do echo x; sleep 0.01; done" & sleep 0.2; exit 0'],
      stdout: { tail: 1000 },
      group: true,
    });
    expect(chatty.exitCode).toBe(0);
    await run({ command: 'pkill', args: ['-f', 'while true; do echo x'] });
  });

  it('says how the process itself ended before a pipe it left behind closes', async () => {
    const pidFile = join(tempDir(), 'escaped');
    const running = start({
      command: 'sh',
      args: ['-c', `setsid sleep 600 & echo $! > ${pidFile}; exit 7`],
      stdout: 'pipe',
    });
    expect(await running.exit).toBe('exited with code 7');
    process.kill(Number(readFileSync(pidFile, 'utf8')), 'SIGKILL');
    running.stdout?.destroy();
    expect((await running.finished).exitCode).toBe(7);
  });

  it('reports a command that cannot start as a result, never an exception', async () => {
    const r = await run({ command: 'no-such-command-alight', args: [] });
    expect(r.exitCode).toBeNull();
    expect(r.reason).toBe('cannot start no-such-command-alight: ENOENT (is it installed and on PATH?)');
    expect(probe('no-such-command-alight', []).startError).toBe('ENOENT');
    const notADir = join(tempDir(), 'file');
    await run({ command: 'sh', args: ['-c', 'echo x'], stdout: { file: notADir } });
    const blocked = await run({ command: 'true', args: [], stdout: { file: join(notADir, 'under', 'a.log') } });
    expect(blocked.exitCode).toBeNull();
    expect(blocked.reason).toMatch(/^cannot start true: cannot open its log \(.*(ENOTDIR|EEXIST)/);
  });

  it('passes the environment it is given, and only that', async () => {
    const r = await run({
      command: '/bin/sh',
      args: ['-c', 'echo "$ALIGHT_KEPT" $(test -n "$HOME" && echo home || echo no-home)'],
      env: { ALIGHT_KEPT: 'yes' },
      stdout: { tail: 100 },
    });
    expect(r.stdout).toBe('yes no-home\n');
  });

  it('answers a probe with its output, exit code and input', () => {
    const dir = tempDir();
    expect(probe('sh', ['-c', 'cat; pwd; exit 2'], { cwd: dir, input: 'in\n' })).toEqual({
      exitCode: 2,
      stdout: `in\n${dir}\n`,
      stderr: '',
      startError: null,
    });
    expect(existsSync(dir)).toBe(true);
  });
});
