import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';
import type { RolloutTrace } from '../../src/traces/export.js';
import { alight, FIXTURES } from '../helpers/cli.js';
import { tempDir } from '../helpers/gateway.js';
import { type ScriptedUpstream, startScriptedUpstream } from '../helpers/scripted-upstream.js';

let upstream: ScriptedUpstream;
let dir: string;
beforeAll(async () => {
  upstream = await startScriptedUpstream({ reply: (i) => `step ${i} done`, tokensPerChunk: 3, lastChunkDelayMs: 1000 });
  dir = tempDir();
});
afterAll(async () => upstream.close());

describe('alight record --tasks', () => {
  it('runs 3 tasks × 4 rollouts through the openai SDK and records every token exactly', async () => {
    const tasks = join(dir, 'tasks.jsonl');
    writeFileSync(
      tasks,
      [
        { id: 'a', prompt: 'fix bug a', reward: 1 },
        { id: 'b', prompt: 'fix bug b', reward: 0.5 },
        { instance_id: 'c', prompt: 'fix bug c', reward: 0, turns: 4 },
      ]
        .map((t) => JSON.stringify(t))
        .join('\n'),
    );
    const db = join(dir, 'alight.db');
    const res = await alight([
      'record',
      '--upstream',
      upstream.url,
      '--db',
      db,
      '--run',
      'e2e',
      '--tasks',
      tasks,
      '-n',
      '4',
      '--concurrency',
      '4',
      '--json',
      '--',
      process.execPath,
      join(FIXTURES, 'sdk-harness.mjs'),
    ]);
    expect(res.stderr).not.toContain('unexpected error');
    expect(res.code).toBe(0);
    const summary = JSON.parse(res.stdout);
    expect(summary).toMatchObject({
      run: 'e2e',
      rollouts: 12,
      succeeded: 12,
      failed: 0,
      calls: (3 + 3 + 4) * 4,
      error_calls: 0,
    });
    expect(summary.mean_reward).toBeCloseTo(0.5);

    const out = join(dir, 'traces.jsonl');
    const exp = await alight(['traces', 'export', '--run', 'e2e', '--db', db, '--out', out]);
    expect(exp.code).toBe(0);
    const traces = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as RolloutTrace);
    expect(traces).toHaveLength(12);
    const store = Store.open(db);
    let streamed = 0;
    for (const t of traces) {
      expect(t.state).toBe('succeeded');
      expect(t.exit_code).toBe(0);
      expect(t.group_id).toBe(`e2e/${t.task_id}`);
      expect(t.reward).toBe({ a: 1, b: 0.5, c: 0 }[t.task_id!]);
      expect(t.calls.map((c) => c.seq)).toEqual([...Array(t.task_id === 'c' ? 4 : 3).keys()]);
      const firstChunks = store
        .events(t.rollout_id)
        .filter((e) => e.type === 'first-chunk')
        .map((e) => JSON.parse(e.data));
      for (const call of t.calls) {
        const marker = `${t.rollout_id} turn ${call.seq}`;
        const produced = upstream.log.filter((p) =>
          (p.request.messages as { content: string }[]).at(-1)!.content.startsWith(marker),
        );
        expect(produced).toHaveLength(1);
        expect(call.prompt_token_ids).toEqual(produced[0].promptIds);
        expect(call.completion_token_ids).toEqual(produced[0].completionIds);
        expect(call.completion_logprobs).toEqual(produced[0].logprobs);
        expect(call.stream).toBe(call.seq % 2 === 1);
        if (call.stream) {
          streamed++;
          // The harness had the first chunk before the upstream even sent the last one.
          const seen = firstChunks.find((e) => e.turn === call.seq);
          expect(seen.at).toBeLessThan(produced[0].lastChunkAt!);
        }
      }
    }
    expect(streamed).toBe(4 * (1 + 1 + 2));
    const shown = await alight(['traces', 'show', traces[0].rollout_id, '--db', db]);
    expect(shown.stdout).toMatch(/events: first-chunk( ×\d)?\n/);
    store.close();
    const logs = readdirSync(join(dir, 'runs', 'e2e', 'rollouts'));
    expect(logs.filter((f) => f.endsWith('.stdout.log'))).toHaveLength(12);

    // The same --run again: it adds to the run, and the summary is this invocation's.
    const again = await alight(
      ['record', '--upstream', upstream.url, '--db', db, '--run', 'e2e', '--tasks', tasks, '-n', '1', '--json'].concat([
        '--',
        process.execPath,
        join(FIXTURES, 'sdk-harness.mjs'),
      ]),
    );
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ rollouts: 3, run_rollouts: 15, calls: 3 + 3 + 4 });
  });
});
