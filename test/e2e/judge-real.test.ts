import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ManagedServe, startManagedServe } from '../../src/serve/managed.js';
import { resolveModel } from '../../src/serve/models.js';
import { Store } from '../../src/store/store.js';
import { alight } from '../helpers/cli.js';
import { tempDir } from '../helpers/gateway.js';
import { tinyModel } from '../helpers/tiny-model.js';

// A real pretrained model as the judge: SmolLM2-135M-Instruct (Apache-2.0, the real-model benchmark's model) on
// `alight serve`, asked for its answer's JSON schema (guided decoding under a grammar), judging two steps of the demo's
// training. A model this small judges badly; what is checked is that the whole loop runs on a real judge: each step's
// groups judged in one call each, every answer in shape, the scores on the scale and trained on.
const ROOT = new URL('../../', import.meta.url).pathname;
let judge: ManagedServe;
beforeAll(async () => {
  const gguf = await resolveModel('smollm2-135m-instruct', (line) => process.stderr.write(`${line}\n`));
  judge = await startManagedServe(gguf, ['--threads', '1', '--parallel', '2', '--ctx', '4096']);
}, 600_000);
afterAll(() => judge?.stop());

describe('a real model as the judge', () => {
  it('judges every group of two training steps in shape, on its 0–10 scale', async () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, 'alight.config.yaml'),
      [
        'reward:',
        '  judge:',
        `    url: ${judge.url}`,
        `    model: ${judge.model}`,
        '    rubric: Score 10 for answers written only in lowercase vowels, 0 for none.',
        '    min: 0',
        '    max: 10',
        // Room for the schema's longest answer: four explanations of up to 200 characters, a token a character where
        // the model writes digits (its prompt is new each run, nonces and order, and so are its answers).
        '    maxTokens: 1000',
        '    timeoutS: 600',
        '',
      ].join('\n'),
    );
    const settings = ['-n', '4', '--batch-size', '2', '--steps', '2', '--lr', '0.01', '--run', 'real-judge'];
    const res = await alight(
      [
        ...['train', '--model', tinyModel(0), '--tasks', join(ROOT, 'examples/vowels/tasks.jsonl'), ...settings],
        ...['--', 'node', join(ROOT, 'examples/vowels/harness.mjs')],
      ],
      { cwd: dir, timeoutMs: 1_200_000 },
    );
    expect(res.code, res.stderr).toBe(0);
    const store = Store.open(join(dir, '.alight', 'alight.db'));
    try {
      const steps = store.trainSteps('real-judge');
      expect(steps.map((s) => [s.metrics.judge_calls, s.metrics.judge_failed])).toEqual([
        [2, 0],
        [2, 0],
      ]);
      const calls = store.judge.calls('real-judge');
      expect(calls.every((c) => c.problem === null && c.promptTokens! > 0 && c.completionTokens! > 0)).toBe(true);
      const scores = store.rolloutSummaries({ run: 'real-judge' }).map((r) => store.lastReward(r.id)!);
      expect(scores).toHaveLength(16);
      for (const s of scores) {
        expect(s.source).toBe('judge');
        expect(Number.isInteger(s.value) && s.value >= 0 && s.value <= 10).toBe(true);
      }
    } finally {
      store.close();
    }
  }, 1_200_000);
});
