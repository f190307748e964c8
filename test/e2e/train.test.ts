import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';
import { alight } from '../helpers/cli.js';
import { writeDataFixtures } from '../helpers/data-fixtures.js';
import { tinyModel } from '../helpers/tiny-model.js';
import { HARNESS, project, stepCount, stepsOf, trainArgs, waitFor } from '../helpers/train-project.js';

// `alight train` end to end on CPU: the torch worker serves and trains a tiny Llama, a held-back harness (digits,
// not the example's vowels) runs through the gateway on the openai SDK.
let model: string;
beforeAll(() => {
  model = tinyModel(1);
}, 120_000);

const common = (p: { tasks: string }, steps: number) => trainArgs(model, p, steps);

describe('alight train', () => {
  it('learns a held-back task, every call marked with the weights version that served it', async () => {
    const p = project([
      { id: 'count', prompt: 'Count to three.' },
      { id: 'year', prompt: 'What year is it?' },
    ]);
    const val = join(p.dir, 'val.jsonl');
    writeFileSync(val, JSON.stringify({ id: 'held-out', prompt: 'How many legs does a spider have?' }));
    const res = await alight(
      [
        ...common(p, 12),
        '--val-tasks',
        val,
        '--val-every',
        '6',
        '--run',
        'learn',
        '--json',
        '--',
        process.execPath,
        HARNESS,
      ],
      { cwd: p.dir, timeoutMs: 300_000 },
    );
    expect(res.code, res.stderr).toBe(0);
    const rewards = stepsOf(p.db, 'learn').map((s) => s.metrics.reward_mean as number);
    expect(rewards).toHaveLength(12);
    // Validation ran after steps 5 and 11, on the held-out task, in val mode.
    expect(stepsOf(p.db, 'learn').map((s) => (s.metrics.val_reward === null ? null : 'v'))).toEqual([
      ...Array(5).fill(null),
      'v',
      ...Array(5).fill(null),
      'v',
    ]);
    const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / xs.length;
    expect(mean(rewards.slice(-3)), `rewards ${rewards.map((r) => r.toFixed(2)).join(' ')}`).toBeGreaterThan(
      mean(rewards.slice(0, 3)) + 0.15,
    );
    // Step s's rollouts were served by the weights after s updates: version s, on every call, no call unmarked.
    const store = Store.open(p.db);
    expect(
      store.db
        .prepare(`SELECT mode, count(*) AS n FROM rollouts WHERE run = 'learn' GROUP BY mode ORDER BY mode`)
        .all(),
    ).toEqual([
      { mode: 'train', n: 12 * 2 * 8 },
      { mode: 'val', n: 2 },
    ]);
    const rows = store.db
      .prepare(`SELECT r.group_id AS g, c.model_version AS v FROM calls c JOIN rollouts r ON r.id = c.rollout_id
      WHERE r.run = 'learn' AND r.mode = 'train'`)
      .all() as { g: string; v: number | null }[];
    store.close();
    expect(rows).toHaveLength(12 * 2 * 8);
    for (const { g, v } of rows) expect(v, g).toBe(Number(/\/step(\d+)\./.exec(g)![1]));
  }, 300_000);

  it('skips the update of a step whose every group scored alike (dropZeroVariance), and moves on', async () => {
    const p = project([
      { id: 'count', prompt: 'Count to three.' },
      { id: 'year', prompt: 'What year is it?' },
    ]);
    writeFileSync(join(p.dir, 'alight.config.yaml'), 'train:\n  batch:\n    dropZeroVariance: true\n');
    const res = await alight(
      [...common(p, 2), '--reward-cmd', 'echo 0', '--run', 'flat', '--json', '--', process.execPath, HARNESS],
      { cwd: p.dir, timeoutMs: 300_000 },
    );
    expect(res.code, res.stderr).toBe(0);
    const steps = stepsOf(p.db, 'flat').map((s) => s.metrics);
    expect(steps.map((m) => [m.version, m.update_skipped, m.rows, m.dropped_zero_variance])).toEqual([
      [1, 1, 0, 16],
      [2, 1, 0, 16],
    ]);
  }, 300_000);

  it('trains on the tasks alight data kept (--from-db), each given to the harness as its SWE-bench row', async () => {
    const p = project([]);
    const fx = writeDataFixtures(p.dir);
    for (const args of [['import', ...fx.files], ['clean'], ['dedupe'], ['decontaminate']]) {
      const res = await alight(['data', ...args, '--db', p.db]);
      expect(res.code, res.stderr).toBe(0);
    }
    const harness = join(p.dir, 'swe-harness.mjs');
    writeFileSync(
      harness,
      `
      const task = JSON.parse(process.env.ALIGHT_TASK_JSON);
      const res = await fetch(process.env.OPENAI_BASE_URL + '/chat/completions', { method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer ' + process.env.OPENAI_API_KEY },
        body: JSON.stringify({ model: 'policy', max_tokens: 4, messages: [{ role: 'user', ` +
        `content: task.problem_statement.slice(0, 200) }] }) });
      if (!res.ok) process.exit(1);
      const tests = JSON.parse(task.FAIL_TO_PASS);
      await fetch(process.env.ALIGHT_REWARD_URL, { method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ value: tests.length > 0 && task.instance_id === process.env.ALIGHT_TASK_ID ? 1 : 0 }) });
    `,
    );
    const res = await alight(
      [
        'train',
        '--model',
        model,
        '--from-db',
        '-n',
        '2',
        '--batch-size',
        String(fx.kept.length),
        '--steps',
        '1',
        '--run',
        'swe',
        '--db',
        p.db,
        '--',
        process.execPath,
        harness,
      ],
      { cwd: p.dir, timeoutMs: 120_000 },
    );
    expect(res.code, res.stderr).toBe(0);
    const store = Store.open(p.db);
    const tasks = (
      store.db.prepare(`SELECT DISTINCT task_id AS t FROM rollouts WHERE run = 'swe'`).all() as { t: string }[]
    )
      .map((r) => r.t)
      .sort();
    store.close();
    expect(tasks).toEqual([...fx.kept].sort());
    expect(stepsOf(p.db, 'swe')[0].metrics).toMatchObject({
      reward_mean: 1,
      rollouts: fx.kept.length * 2,
      rollouts_failed: 0,
    });
  }, 120_000);

  it('async: groups in flight across steps, the first to ' +
    'complete trained, staleness bounded, truncated IS applied', async () => {
    const p = project([
      { id: 'count', prompt: 'Count to three.' },
      { id: 'year', prompt: 'What year is it?' },
      { id: 'abc', prompt: 'Say abc.' },
    ]);
    // Concurrency for all five groups at once: the three not taken have made their calls before the update.
    const res = await alight(
      [
        ...common(p, 5),
        '-n',
        '4',
        '--concurrency',
        '20',
        '--async-groups',
        '5',
        '--max-staleness',
        '1',
        '--is-correction',
        'token',
        '--run',
        'async',
        '--json',
        '--',
        process.execPath,
        HARNESS,
      ],
      { cwd: p.dir, timeoutMs: 300_000 },
    );
    expect(res.code, res.stderr).toBe(0);
    const steps = stepsOf(p.db, 'async');
    expect(steps).toHaveLength(5);
    for (const { metrics: m } of steps) {
      expect(m).toHaveProperty('in_flight_rollouts');
      expect(m.drain_s).toBeGreaterThanOrEqual(0);
      expect(m.staleness_max as number).toBeLessThanOrEqual(1);
      expect(m.is_weight_mean as number).toBeGreaterThan(0);
      expect(m.is_capped_fraction as number).toBeGreaterThanOrEqual(0);
    }
    // Groups finished while an update ran are trained one version later: some step trained on version s − 1's
    // samples.
    expect(
      steps.some((s) => (s.metrics.staleness_max as number) === 1),
      JSON.stringify(steps.map((s) => s.metrics.staleness_max)),
    ).toBe(true);
    // What each step trained on (the batch file's metadata): groups whose calls were served by versions s − 1 … s.
    const store = Store.open(p.db);
    const version = store.db.prepare(
      'SELECT min(model_version) AS lo, max(model_version) AS hi FROM calls WHERE rollout_id = ?',
    );
    for (let s = 0; s < 5; s++) {
      const file = readFileSync(join(p.dir, '.alight', 'runs', 'async', 'batches', `step-${s}.safetensors`));
      const header = JSON.parse(file.subarray(8, 8 + Number(file.readBigUInt64LE(0))).toString('utf8'));
      const meta = JSON.parse(header.__metadata__.alight) as { rollouts: { rollout_id: string; group_id: string }[] };
      // Batch size 2: two groups (one dropped as too stale is replaced by a fresh one).
      expect(new Set(meta.rollouts.map((r) => r.group_id)).size).toBe(2);
      for (const r of meta.rollouts) {
        const { lo, hi } = version.get(r.rollout_id) as { lo: number; hi: number };
        expect([lo >= s - 1, hi <= s], `step ${s}: ${r.group_id} served by ${lo}..${hi}`).toEqual([true, true]);
      }
    }
    // Every group that was started ended: none was left running when the run finished.
    expect(
      store.db
        .prepare(`SELECT count(*) AS n FROM rollouts WHERE run = 'async' AND state IN ('queued', 'running')`)
        .get(),
    ).toEqual({ n: 0 });
    // Those still running at the end say so, not "interrupted" (nobody pressed Ctrl-C).
    const errors = store.db
      .prepare(`SELECT DISTINCT error FROM rollouts WHERE run = 'async' AND state = 'failed'`)
      .all() as { error: string }[];
    expect(errors.filter((e) => e.error !== 'not trained: the run ended first')).toEqual([]);
    store.close();
  }, 300_000);

  it('fails a rollout whose harness is SIGKILLed, with the reason, and drops it from its group', async () => {
    const p = project([{ id: 'count', prompt: 'Count to three.' }]);
    const marker = join(p.dir, 'killed-once');
    writeFileSync(p.tasks, JSON.stringify({ id: 'count', prompt: 'Count to three.', sigkill_marker: marker }));
    const res = await alight([...common(p, 1), '--batch-size', '1', '--run', 'kill', '--', process.execPath, HARNESS], {
      cwd: p.dir,
      timeoutMs: 120_000,
    });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toMatch(/FAIL count ro_\w+: killed by SIGKILL/);
    expect(stepsOf(p.db, 'kill')[0].metrics).toMatchObject({ rollouts: 8, rollouts_failed: 1, rows: 7 });
  }, 120_000);

  it('--runner pool: the steps run their rollouts as episodes of warm hosts; a SIGKILL costs one rollout', async () => {
    const p = project([{ id: 'count', prompt: 'Count to three.', sigkill_marker: 'killed-once' }]);
    const args = [...common(p, 2), '--batch-size', '1', '--runner', 'pool', '--run', 'pool'];
    const res = await alight([...args, '--', process.execPath, HARNESS], { cwd: p.dir, timeoutMs: 300_000 });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toMatch(/FAIL count ro_\w+: killed by SIGKILL/);
    const [first, second] = stepsOf(p.db, 'pool').map((s) => s.metrics);
    expect(first).toMatchObject({ rollouts: 8, rollouts_failed: 1, rows: 7 });
    expect(second).toMatchObject({ rollouts: 8, rollouts_failed: 0, rows: 8 });
  }, 300_000);

  it('replaces a worker killed mid-step (train.worker.restarts): the run goes on from the last checkpoint and ends', async () => {
    const p = project([
      { id: 'count', prompt: 'Count to three.' },
      { id: 'year', prompt: 'What year is it?' },
    ]);
    writeFileSync(join(p.dir, 'alight.config.yaml'), 'train:\n  worker:\n    restarts: 1\n');
    const running = alight(
      [...common(p, 4), '--save-every', '1', '--run', 'restart', '--', process.execPath, HARNESS],
      {
        cwd: p.dir,
        timeoutMs: 300_000,
      },
    );
    await waitFor(() => stepCount(p.db, 'restart') >= 2);
    const log = join(p.dir, '.alight', 'runs', 'restart', 'worker.log');
    process.kill(Number(/pid (\d+):/.exec(readFileSync(log, 'utf8'))![1]), 'SIGKILL');
    const res = await running;
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toMatch(/the Python worker killed by SIGKILL during step \d/);
    const steps = stepsOf(p.db, 'restart');
    expect(steps.map((s) => s.step)).toEqual([0, 1, 2, 3]);
    expect(steps.map((s) => s.metrics.version)).toEqual([1, 2, 3, 4]);
  }, 300_000);

  it('reports a worker killed mid-step, and --resume ' +
    'continues from the last checkpoint with the same data', async () => {
    const p = project([
      { id: 'count', prompt: 'Count to three.' },
      { id: 'year', prompt: 'What year is it?' },
      { id: 'name', prompt: 'Your name?' },
    ]);
    // no automatic restart: the run must fail
    writeFileSync(join(p.dir, 'alight.config.yaml'), 'train:\n  worker:\n    restarts: 0\n');
    const args = [...common(p, 6), '--save-every', '2', '--run', 'crash'];
    const running = alight([...args, '--', process.execPath, HARNESS], { cwd: p.dir, timeoutMs: 300_000 });
    // Once step 2 is done (checkpoint after step 1), kill the worker while step 3 runs.
    const log = join(p.dir, '.alight', 'runs', 'crash', 'worker.log');
    await waitFor(() => stepCount(p.db, 'crash') >= 3);
    const pid = Number(/pid (\d+):/.exec(readFileSync(log, 'utf8'))![1]);
    process.kill(pid, 'SIGKILL');
    const crashed = await running;
    expect(crashed.code).not.toBe(0);
    expect(crashed.stderr).toMatch(
      /the Python worker killed by SIGKILL during step 3 .*continue from the last checkpoint with: alight train --resume crash/,
    );
    const before = stepsOf(p.db, 'crash');
    expect(before.map((s) => s.step)).toEqual([0, 1, 2]);

    // The run's settings (model, tasks, seed, …) come from the store: --resume needs only the harness.
    const resumed = await alight(['train', '--resume', 'crash', '--', process.execPath, HARNESS], {
      cwd: p.dir,
      timeoutMs: 300_000,
    });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toMatch(/steps 2…5/); // step 2 had no checkpoint: redone from the one after step 1
    const after = stepsOf(p.db, 'crash');
    expect(after.map((s) => s.step)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(after.slice(0, 2)).toEqual(before.slice(0, 2));
    expect(after.map((s) => s.metrics.version)).toEqual([1, 2, 3, 4, 5, 6]);
    // The redone step 2 trained on the same tasks as the interrupted attempt at it.
    const store = Store.open(p.db);
    const attempts = store.db
      .prepare(`SELECT group_id AS g, task_id AS t FROM rollouts WHERE run = 'crash' AND group_id LIKE 'crash/step2.%'`)
      .all() as { g: string; t: string }[];
    store.close();
    const byAttempt = new Map<string, string[]>();
    for (const a of attempts) byAttempt.set(a.g.split('/')[1], [...(byAttempt.get(a.g.split('/')[1]) ?? []), a.t]);
    expect(byAttempt.size).toBe(2);
    const [first, second] = [...byAttempt.values()].map((ts) => ts.sort().join(','));
    expect(second).toBe(first);
  }, 600_000);
});
