import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Launcher, localLauncher, type ProcessSpec } from '../../src/runner/launcher.js';
import { runRollouts } from '../../src/runner/run-rollouts.js';
import type { Task } from '../../src/runner/tasks.js';
import { startRig } from '../helpers/gateway.js';

describe('the rollout runner', () => {
  it('runs every harness and reward command through the launcher it is given, with the rollout environment', async () => {
    const rig = await startRig();
    try {
      // A launcher elsewhere (a Kubernetes Job, a remote machine) sees only the spec: here it keeps each one and
      // runs it locally.
      const specs: ProcessSpec[] = [];
      const recording: Launcher = {
        name: 'recording',
        run: (spec) => {
          specs.push(spec);
          return localLauncher.run(spec);
        },
      };
      const tasks: Task[] = ['a', 'b'].map((id) => ({ id, data: { id } }));
      const ids = await runRollouts(
        {
          store: rig.store,
          gateway: rig.gateway,
          run: 'seam',
          withhold: ['ALIGHT_ADMIN_KEY'],
          signal: new AbortController().signal,
          onEvent: () => {},
          launcher: recording,
        },
        {
          mode: 'record',
          command: 'sh',
          timeoutMs: 30_000,
          rewardCmd: 'echo "reward for $ALIGHT_TASK_ID: 0.75"',
          concurrency: 2,
          logDir: join(rig.dir, 'logs'),
        },
        tasks.map((task) => ({ task, args: ['-c', 'test -n "$OPENAI_API_KEY"'], groupId: `seam/${task.id}` })),
      );
      expect(ids).toHaveLength(2);
      for (const id of ids) {
        expect(rig.store.getRollout(id)?.state).toBe('succeeded');
        expect(rig.store.lastReward(id)?.value).toBe(0.75);
      }
      // Two harnesses, each with its reward command, its rollout's own token and id, and the admin key withheld: the
      // spec carries only what alight adds (what a pod gets), the launcher inherits the rest here.
      expect(specs.map((s) => [s.command, s.rewardCmd])).toEqual([
        ['sh', 'echo "reward for $ALIGHT_TASK_ID: 0.75"'],
        ['sh', 'echo "reward for $ALIGHT_TASK_ID: 0.75"'],
      ]);
      expect(new Set(specs.map((s) => s.env.ALIGHT_ROLLOUT_ID))).toEqual(new Set(ids));
      expect(new Set(specs.map((s) => s.rollout?.id))).toEqual(new Set(ids));
      expect(new Set(specs.map((s) => s.env.OPENAI_API_KEY)).size).toBe(2);
      for (const s of specs) {
        expect(s.env.PATH).toBeUndefined();
        expect(s.withhold).toContain('ALIGHT_ADMIN_KEY');
      }
    } finally {
      await rig.close();
    }
  });
});
