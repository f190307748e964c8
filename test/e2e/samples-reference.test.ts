import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSafetensors } from '../../src/samples/safetensors.js';
import { alight, FIXTURES } from '../helpers/cli.js';
import { tempDir } from '../helpers/gateway.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream.js';

const REFERENCE = fileURLToPath(new URL('../../python/reference/batch_reference.py', import.meta.url));

let upstream: ScriptedUpstream;
let dir: string;
let db: string;
beforeAll(async () => {
  upstream = await startScriptedUpstream({ reply: (i) => `step ${i} ${'w'.repeat(i % 7)}` });
  dir = tempDir();
  db = join(dir, 'alight.db');
  const tasks = join(dir, 'tasks.jsonl');
  writeFileSync(tasks, [{ id: 'a', reward: 1, turns: 4 }, { id: 'b', reward: 0.25, turns: 3 }, { id: 'c', reward: 0, turns: 2 }, { id: 'd', reward: 0.5, subagent: true }]
    .map((t) => JSON.stringify(t)).join('\n'));
  const res = await alight(['record', '--upstream', upstream.url, '--db', db, '--run', 'ref', '--tasks', tasks, '-n', '3', '--json', '--',
    process.execPath, join(FIXTURES, 'sdk-harness.mjs')]);
  expect(res.code, res.stderr).toBe(0);
  await alight(['traces', 'export', '--run', 'ref', '--db', db, '--out', join(dir, 'traces.jsonl')]);
});
afterAll(async () => upstream.close());

describe('the batch against a plain-Python reference written from DESIGN §6', () => {
  for (const [advantage, lossNorm] of [['grpo', 'per-rollout-mean'], ['drgrpo', 'token-mean'], ['rloo', 'seq-mean-token-mean'],
    ['grpo', 'seq-mean-token-sum'], ['rloo', 'constant']] as const) {
    it(`agrees to 1e-6 with ${advantage} and ${lossNorm}`, async () => {
      const out = join(dir, `${advantage}-${lossNorm}.safetensors`);
      const res = await alight(['samples', 'build', '--run', 'ref', '--db', db, '--out', out, '--advantage', advantage, '--loss-norm', lossNorm,
        '--max-response-tokens', '4096']);
      expect(res.code, res.stderr).toBe(0);
      const { tensors: ours, metadata } = readSafetensors(out);
      // Task d's rollouts run a sub-agent beside the main conversation: two rows each.
      expect(JSON.parse(metadata.alight).rollouts.map((r: { rows: number }) => r.rows)).toEqual([1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2]);
      const reference = JSON.parse(execFileSync('python3', [REFERENCE, join(dir, 'traces.jsonl'), '--advantage', advantage,
        '--loss-norm', lossNorm, '--budget', '4096'], { encoding: 'utf8', maxBuffer: 64 << 20 }));
      for (const [name, values] of Object.entries(reference) as [string, number[]][]) {
        const mine = Array.from(ours[name] as ArrayLike<number | bigint>, Number);
        expect(mine, name).toHaveLength(values.length);
        mine.forEach((v, i) => expect(Math.abs(v - values[i]), `${name}[${i}]`).toBeLessThan(1e-6));
      }
    });
  }
});
