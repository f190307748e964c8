import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/store.js';
import { alight } from '../helpers/cli.js';
import { tempDir } from '../helpers/gateway.js';
import { assistantTexts, type ScriptedJudge, startScriptedJudge, trajectoryTexts } from '../helpers/scripted-judge.js';
import { tinyModel } from '../helpers/tiny-model.js';

// `alight train --judge`: the demo (examples/vowels, the seed-made model, its settings) with the rewards a scripted
// judge gives (the vowel share of the answers, as the rubric asks) in place of the harness's own: it learns as the
// demo does.
const ROOT = new URL('../../', import.meta.url).pathname;
let judge: ScriptedJudge;
beforeAll(async () => {
  judge = await startScriptedJudge((ids, body) => {
    const texts = trajectoryTexts(body);
    const share = (t: string) => [...t.padEnd(8).slice(0, 8)].filter((c) => 'aeiou'.includes(c)).length / 8;
    const scores = ids.map((id) => {
      const answers = assistantTexts(texts.get(id)!);
      return { id, score: answers.reduce((a, t) => a + share(t), 0) / answers.length, explanation: 'vowel share' };
    });
    return { text: JSON.stringify({ scores }) };
  });
});
afterAll(() => judge?.close());

describe('alight train --judge', () => {
  it("learns the demo's task from the judge's scores alone", async () => {
    const dir = tempDir();
    // The judge scores as the demo's harness does, so it learns on the curve RL on the harness's own rewards takes:
    // at this rate, ~0.06 to ~0.5 in 6 steps (bench/distill.ts has the demo's 30 steps at its own rate, 0.01).
    const settings = ['-n', '8', '--batch-size', '4', '--steps', '6', '--lr', '0.03', '--seed', '0', '--run', 'judged'];
    const res = await alight(
      [
        ...['train', '--model', tinyModel(0), '--tasks', join(ROOT, 'examples/vowels/tasks.jsonl'), ...settings],
        ...['--judge', judge.url, '--rubric', 'Answers in lowercase vowels only score 1.'],
        ...['--', 'node', join(ROOT, 'examples/vowels/harness.mjs')],
      ],
      { cwd: dir, timeoutMs: 1_200_000 },
    );
    expect(res.code, res.stderr).toBe(0);
    const store = Store.open(join(dir, '.alight', 'alight.db'));
    try {
      const steps = store.trainSteps('judged');
      const rewards = steps.map((s) => s.metrics.reward_mean as number);
      const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / xs.length;
      expect(mean(rewards.slice(-2)) - mean(rewards.slice(0, 2)), rewards.join(' ')).toBeGreaterThanOrEqual(0.3);
      // Every step's groups were judged (a call each, or the cache), none failed; the rewards are the judge's rows.
      for (const s of steps) {
        expect(Number(s.metrics.judge_calls) + Number(s.metrics.judge_cached_groups)).toBe(4);
        expect(s.metrics.judge_failed).toBe(0);
      }
      const trained = store.rolloutSummaries({ run: 'judged', mode: 'train' });
      expect(trained.every((r) => store.lastReward(r.id)?.source === 'judge')).toBe(true);
      expect(store.judge.calls('judged').length).toBe(judge.requests.length);
    } finally {
      store.close();
    }
  }, 1_200_000);
});
