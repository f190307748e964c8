import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startPoolLauncher } from '../../src/runner/pool-launcher.js';
import { type RolloutBatch, runRollouts } from '../../src/runner/run-rollouts.js';
import type { Task } from '../../src/runner/tasks.js';
import { FIXTURES } from '../helpers/cli.js';
import { type Rig, startRig } from '../helpers/gateway.js';

// `runner: pool`: the rollouts of a real gateway run as episodes of warm Node hosts (bin/harness-host.mjs), the
// harness an unmodified ES module that loads the openai SDK.
const harness = join(FIXTURES, 'pool-harness.mjs');

async function rollouts(rig: Rig, tasks: Task[], batch: Partial<RolloutBatch> = {}) {
  const launcher = startPoolLauncher();
  try {
    const ids = await runRollouts(
      {
        store: rig.store,
        gateway: rig.gateway,
        run: 'pool',
        withhold: ['ALIGHT_ADMIN_KEY'],
        signal: new AbortController().signal,
        onEvent: () => {},
        launcher,
      },
      {
        mode: 'record',
        command: process.execPath,
        timeoutMs: 300_000,
        concurrency: 2,
        logDir: join(rig.dir, 'logs'),
        ...batch,
      },
      tasks.map((task) => ({ task, args: [harness, 'arg-1'], groupId: null, cwd: rig.dir })),
    );
    const log = (id: string, stream: string) => readFileSync(join(rig.dir, 'logs', `${id}.${stream}.log`), 'utf8');
    return ids.map((id) => ({
      id,
      rollout: rig.store.getRollout(id)!,
      seen: JSON.parse(log(id, 'stdout').split('\n')[0]) as Record<string, unknown>,
      stderr: log(id, 'stderr'),
      calls: rig.store.calls.count(id),
    }));
  } finally {
    await launcher.close();
  }
}

const tasks = (...behave: (string | null)[]): Task[] =>
  behave.map((b, i) => ({ id: `t${i}`, data: { id: `t${i}`, behave: b } }));

describe('the pool runner', () => {
  it('runs each rollout as an episode of a warm host, with its own environment, argv, folder, logs and token', async () => {
    const rig = await startRig();
    process.env.ALIGHT_ADMIN_KEY = 'not-for-harnesses';
    try {
      const done = await rollouts(rig, tasks(...Array(8).fill(null)));
      for (const d of done) {
        expect(d.rollout.state).toBe('succeeded');
        expect(rig.store.lastReward(d.id)?.value).toBe(0.5);
        expect(d.calls).toBe(1);
        expect(d.seen).toMatchObject({ rollout: d.id, argv: ['arg-1'], cwd: rig.dir, admin: null });
        expect(d.stderr).toBe(`stderr of ${d.rollout.task_id}\n`);
      }
      // Eight rollouts, at most two at a time: two hosts, each loading the SDK once, and what one episode left on
      // globalThis is there in its host's next (module state is fresh; the process's is shared: docs/design.md).
      expect(new Set(done.map((d) => d.seen.pid)).size).toBe(2);
      expect(done.filter((d) => d.seen.left !== null).length).toBe(6);
    } finally {
      delete process.env.ALIGHT_ADMIN_KEY;
      await rig.close();
    }
  }, 300_000);

  it('ends an episode as a process would end: an exit code, a throw, a timeout; a host left unclean is replaced', async () => {
    const rig = await startRig();
    try {
      const [exit, thrown, leave, after] = await rollouts(rig, tasks('exit', 'throw', 'leave', null), {
        concurrency: 1,
      });
      expect([exit.rollout.state, exit.rollout.error]).toEqual(['failed', 'exited with code 3']);
      expect(thrown.rollout.state).toBe('failed');
      expect(thrown.stderr).toContain('Error: thrown by t1');
      expect(leave.rollout.state).toBe('succeeded');
      expect(after.rollout.state).toBe('succeeded');
      // The throw and the work left running each cost their host (nothing of theirs may reach the next episode), as
      // does an exit while something is still open (here the SDK's connection, as it usually is); an episode that ends
      // by returning keeps its host (the first test).
      expect(leave.seen.pid).not.toBe(thrown.seen.pid);
      expect(after.seen.pid).not.toBe(leave.seen.pid);
      const [hung, next] = await rollouts(rig, tasks('hang', null), { concurrency: 1, timeoutMs: 3000 });
      expect([hung.rollout.state, hung.rollout.error]).toEqual(['failed', 'timeout']);
      expect(next.rollout.state).toBe('succeeded');
      expect(next.seen.pid).not.toBe(hung.seen.pid);
    } finally {
      await rig.close();
    }
  }, 300_000);

  it('refuses, before any rollout runs, a harness it cannot run as an episode', async () => {
    const rig = await startRig();
    try {
      const cjs = join(rig.dir, 'harness.cjs');
      writeFileSync(cjs, 'console.log(1)\n');
      const launcher = startPoolLauncher();
      const spec = { env: {}, withhold: [], output: { stdout: join(rig.dir, 'o'), stderr: join(rig.dir, 'e') } };
      const common = { ...spec, timeoutMs: null, signal: new AbortController().signal };
      await expect(launcher.run({ ...common, command: 'node', args: [cjs] })).rejects.toThrow(/CommonJS/);
      await expect(launcher.run({ ...common, command: 'python3', args: ['h.py'] })).rejects.toThrow(/Node harnesses/);
      await launcher.close();
    } finally {
      await rig.close();
    }
  });
});
