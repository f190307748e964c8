import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSafetensors } from '../../src/samples/safetensors.js';
import { Store } from '../../src/store/store.js';
import { alight, FIXTURES } from '../helpers/cli.js';
import { tempDir } from '../helpers/gateway.js';
import { type ScriptedUpstream, startScriptedUpstream } from '../helpers/scripted-upstream.js';

let upstream: ScriptedUpstream;
let dir: string;
let db: string;
beforeAll(async () => {
  upstream = await startScriptedUpstream({ reply: (i) => `answer ${i}` });
  dir = tempDir();
  db = join(dir, 'alight.db');
  const tasks = join(dir, 'tasks.jsonl');
  writeFileSync(
    tasks,
    [
      { id: 'a', reward: 1 },
      { id: 'b', reward: 0 },
    ]
      .map((t) => JSON.stringify(t))
      .join('\n'),
  );
  const harness = join(FIXTURES, 'sdk-harness.mjs');
  for (const [run, kind] of [
    ['tokens', 'vllm'],
    ['plain', 'openai-compatible'],
  ]) {
    const res = await alight([
      'record',
      '--upstream',
      upstream.url,
      '--upstream-kind',
      kind,
      '--db',
      db,
      '--run',
      run,
      '--tasks',
      tasks,
      '-n',
      '2',
      '--json',
      '--',
      process.execPath,
      harness,
    ]);
    expect(res.code, res.stderr).toBe(0);
  }
});
afterAll(async () => upstream.close());

describe('alight samples', () => {
  it('builds a batch from a recorded run: one row per rollout, advantages per group', async () => {
    const out = join(dir, 'batch.safetensors');
    const res = await alight([
      'samples',
      'build',
      '--run',
      'tokens',
      '--db',
      db,
      '--out',
      out,
      '--advantage',
      'drgrpo',
      '--json',
    ]);
    expect(res.code, res.stderr).toBe(0);
    const result = JSON.parse(res.stdout);
    expect(result.metrics).toMatchObject({ rollouts: 4, rows: 4, dropped_missing_reward: 0 });
    expect(result.merge.breaks).toBe(0);
    const { tensors, metadata } = readSafetensors(out);
    const meta = JSON.parse(metadata.alight);
    expect(meta.rollouts.map((r: { reward: number }) => r.reward).sort()).toEqual([0, 0, 1, 1]);
    // Each task's group has equal rewards, so Dr. GRPO gives every token an advantage of 0.
    expect(Array.from(tensors.advantages as Float32Array).every((a) => a === 0)).toBe(true);
    const show = await alight(['samples', 'show', out]);
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(/advantage drgrpo, loss norm per-rollout-mean/);
    expect(show.stdout.trim().split('\n')).toHaveLength(4 + 4);
  });

  it('refuses to write an empty batch, with a reason', async () => {
    const plain = await alight(['samples', 'build', '--run', 'plain', '--db', db, '--out', join(dir, 'x.safetensors')]);
    expect(plain.code).toBe(3);
    expect(plain.stderr).toMatch(/no rollout of run plain has calls with token ids \(12 calls without them/);
    const missing = await alight([
      'samples',
      'build',
      '--run',
      'nope',
      '--db',
      db,
      '--out',
      join(dir, 'x.safetensors'),
    ]);
    expect(missing.stderr).toMatch(/no run nope/);
    // A trace whose call points at a deleted earlier call is corrupt: said so, nothing written.
    const store = Store.open(db);
    const victim = store.rolloutSummaries({ run: 'tokens' })[0].id;
    store.db.prepare('DELETE FROM calls WHERE rollout_id = ? AND seq = 0').run(victim);
    store.close();
    const corrupt = await alight([
      'samples',
      'build',
      '--run',
      'tokens',
      '--db',
      db,
      '--out',
      join(dir, 'corrupt.safetensors'),
    ]);
    expect(corrupt.code).toBe(3);
    expect(corrupt.stderr).toMatch(new RegExp(`cannot read the calls of rollout ${victim}: corrupt trace`));
    expect(existsSync(join(dir, 'corrupt.safetensors'))).toBe(false);
    const notBatch = await alight(['samples', 'show', db]);
    expect(notBatch.code).toBe(3);
    expect(notBatch.stderr).toMatch(/cannot read .*alight\.db/);
  });
});
