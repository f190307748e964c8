import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { Store } from '../../src/store/store.js';
import { alight, BIN, FIXTURES } from '../helpers/cli.js';
import { tempDir } from '../helpers/gateway.js';
import { type ScriptedUpstream, startScriptedUpstream } from '../helpers/scripted-upstream.js';

let upstream: ScriptedUpstream;
let dir: string;
let stalledRequests = 0;
beforeAll(async () => {
  upstream = await startScriptedUpstream({
    chunkDelayMs: 40,
    script: (_, body) => {
      if (!JSON.stringify(body.messages).includes('stall-upstream')) return 'ok';
      stalledRequests++;
      return 'hang';
    },
  });
  dir = tempDir();
});
afterAll(async () => upstream.close());

const harness = join(FIXTURES, 'sdk-harness.mjs');
function taskFile(name: string, tasks: object[]): string {
  const path = join(dir, `${name}.jsonl`);
  writeFileSync(path, tasks.map((t) => JSON.stringify(t)).join('\n'));
  return path;
}

describe('harnesses that misbehave', () => {
  it(
    'fails a harness that exits at once, one that hangs, ' + 'and one that does not exist, and keeps the rest',
    async () => {
      const db = join(dir, 'fail.db');
      const tasks = taskFile('mixed', [
        { id: 'ok' },
        { id: 'crash', behaviour: 'crash' },
        { id: 'hang', behaviour: 'hang' },
      ]);
      const res = await alight([
        'record',
        '--upstream',
        upstream.url,
        '--db',
        db,
        '--run',
        'mixed',
        '--tasks',
        tasks,
        '--timeout',
        '8',
        '--concurrency',
        '3',
        '--json',
        '--',
        process.execPath,
        harness,
      ]);
      // The hanging harness never ends by itself: the run ending at all is the timeout's kill (errors.hang below).
      expect(res.code).toBe(0);
      const summary = JSON.parse(res.stdout);
      expect(summary).toMatchObject({ rollouts: 3, succeeded: 1, failed: 2 });
      const errors = Object.fromEntries(
        summary.failures.map((f: { task_id: string; error: string }) => [f.task_id, f.error]),
      );
      expect(errors.crash).toBe('exited with code 3: harness: cannot parse the task');
      expect(errors.hang).toBe('timeout');

      const missing = await alight([
        'record',
        '--upstream',
        upstream.url,
        '--db',
        db,
        '--tasks',
        tasks,
        '--json',
        '--',
        'no-such-harness-xyz',
      ]);
      expect(missing.code).toBe(1);
      expect(JSON.parse(missing.stdout).failures[0].error).toMatch(
        /cannot start no-such-harness-xyz: ENOENT \(is it installed and on PATH\?\)/,
      );
      expect(missing.stderr).toMatch(/every rollout of run .* failed/);
    },
  );

  it('takes the reward from --reward-cmd, which sees the same environment', async () => {
    const db = join(dir, 'reward.db');
    const tasks = taskFile('reward', [
      { id: 't1', score: 0.25 },
      { id: 't2', score: 'none' },
    ]);
    const cmd =
      `node -e "const t = JSON.parse(process.env.ALIGHT_TASK_JSON); console.log('graded', ` +
      `process.env.ALIGHT_TASK_ID); if (t.score === 'none') process.exit(2); console.log('score:', t.score)"`;
    const res = await alight([
      'record',
      '--upstream',
      upstream.url,
      '--db',
      db,
      '--run',
      'rw',
      '--tasks',
      tasks,
      '--reward-cmd',
      cmd,
      '--json',
      '--',
      process.execPath,
      harness,
    ]);
    expect(res.code).toBe(0);
    const rows = JSON.parse((await alight(['traces', 'list', '--db', db, '--json'])).stdout);
    const byTask = Object.fromEntries(
      rows.map((r: { task_id: string; reward: number | null }) => [r.task_id, r.reward]),
    );
    // The command's number wins over the harness's own report (1); no number means no reward.
    expect(byTask).toEqual({ t1: 0.25, t2: 1 });
    const store = Store.open(db);
    const t2 = rows.find((r: { task_id: string }) => r.task_id === 't2');
    expect(store.events(t2.id).map((e) => e.type)).toContain('reward-missing');
    store.close();
  });

  it('gives a clear error for a bad task file', async () => {
    const bad = join(dir, 'bad.jsonl');
    writeFileSync(bad, '{"id": "a"}\nnot json\n{"no_id": 1}\n{"id": "a"}\n');
    const res = await alight([
      'record',
      '--upstream',
      upstream.url,
      '--db',
      join(dir, 'x.db'),
      '--tasks',
      bad,
      '--',
      'true',
    ]);
    expect(res.code).toBe(3);
    expect(res.stderr).toContain('line 2: not JSON');
    expect(res.stderr).toContain('line 3: no "id" or "instance_id"');
    expect(res.stderr).toContain('line 4: duplicate task id a');
    const noUpstream = await alight(['record', '--db', join(dir, 'x.db'), '--', 'true']);
    expect(noUpstream.code).toBe(2);
    expect(noUpstream.stderr).toMatch(/no upstream: pass --upstream/);
  });

  it(
    'stops cleanly on Ctrl-C: harnesses killed, calls ' + 'in flight recorded, rollouts failed as interrupted',
    async () => {
      const db = join(dir, 'int.db');
      const tasks = taskFile('int', [
        { id: 'a', turns: 50 },
        { id: 'b', prompt: 'stall-upstream' },
        { id: 'c', behaviour: 'hang' },
      ]);
      // A copy of the harness at a path of its own, so that the process check below sees this test's harnesses alone.
      const own = join(FIXTURES, `sdk-harness-${process.pid}-interrupt.mjs`);
      copyFileSync(harness, own);
      onTestFinished(() => rmSync(own, { force: true }));
      const answered = upstream.log.length; // the upstream's log holds the earlier tests' calls too
      const child = spawn(
        process.execPath,
        [
          BIN,
          'record',
          '--upstream',
          upstream.url,
          '--db',
          db,
          '--run',
          'int',
          '--tasks',
          tasks,
          '--concurrency',
          '3',
          '--json',
          '--',
          process.execPath,
          own,
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stdout = '';
      child.stdout.on('data', (d) => (stdout += d));
      // Ctrl-C once b's call is waiting on the upstream and a has sent its second call, so its first is stored (the
      // gateway stores a call before it answers, and a asks again only once answered).
      await expect
        .poll(() => stalledRequests > 0 && upstream.log.length >= answered + 2, { timeout: 30_000, interval: 20 })
        .toBe(true);
      child.kill('SIGINT');
      const [code] = await once(child, 'close');
      expect(code).toBe(130);
      const summary = JSON.parse(stdout);
      expect(summary).toMatchObject({ interrupted: true, rollouts: 3, failed: 3 });
      const store = Store.open(db);
      expect(store.db.pragma('integrity_check', { simple: true })).toBe('ok');
      const rows = store.rolloutSummaries({ run: 'int' });
      expect(rows.map((r) => r.error)).toEqual(['interrupted', 'interrupted', 'interrupted']);
      expect(rows.map((r) => r.state)).toEqual(['failed', 'failed', 'failed']);
      const calls = rows.flatMap((r) => store.calls.list(r.id));
      expect(calls.filter((c) => c.status === 'ok').length).toBeGreaterThan(0);
      // b's call was waiting on the upstream when Ctrl-C came: it is recorded, as failed.
      const stalled = store.calls.list(rows.find((r) => r.task_id === 'b')!.id);
      expect(stalled).toHaveLength(1);
      expect(stalled[0].status).toBe('error');
      expect(stalled[0].error).toMatch(/interrupted|disconnected/);
      store.close();
      // No harness outlives the run.
      const ps = await alightPs();
      expect(ps.filter((l) => l.includes(own))).toEqual([]);
    },
  );
});

async function alightPs(): Promise<string[]> {
  const ps = spawn('ps', ['-eo', 'args'], { stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  ps.stdout.on('data', (d) => (out += d));
  await once(ps, 'close');
  return out.split('\n');
}
