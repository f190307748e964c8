import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LlamaModel, Token } from 'node-llama-cpp';
import { beforeAll, describe, expect, it } from 'vitest';
import type { RolloutTrace } from '../../src/traces/export.js';
import { alight, FIXTURES } from '../helpers/cli.js';
import { tempDir } from '../helpers/gateway.js';
import { testModel, testVocab } from '../helpers/model.js';

// The model on two cores shared with the rest of the suite runs many times slower than alone: only a hang is bounded.
const patience = 10 * 60_000;
let model: string;
let vocab: LlamaModel;
beforeAll(async () => {
  model = await testModel();
  vocab = await testVocab();
}, 240_000);

describe('alight record --serve', { timeout: patience }, () => {
  it('records a multi-turn openai-SDK rollout on the real model, each turn extending the last', async () => {
    const dir = tempDir();
    const tasks = join(dir, 'tasks.jsonl');
    writeFileSync(
      tasks,
      `${JSON.stringify({ id: 'sea', prompt: 'Say something about the sea.', turns: 3, max_tokens: 12 })}\n`,
    );
    const db = join(dir, 'alight.db');
    const res = await alight(
      [
        'record',
        '--serve',
        model,
        '--db',
        db,
        '--run',
        'real',
        '--tasks',
        tasks,
        '-n',
        '2',
        '--json',
        '--',
        process.execPath,
        join(FIXTURES, 'sdk-harness.mjs'),
      ],
      { timeoutMs: patience - 60_000 },
    );
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ rollouts: 2, succeeded: 2, calls: 6, error_calls: 0 });
    const exp = await alight(['traces', 'export', '--run', 'real', '--db', db]);
    const traces = exp.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as RolloutTrace);
    let retokenized = 0;
    let trimmed = 0;
    for (const t of traces) {
      expect(t.calls.map((c) => c.stream)).toEqual([false, true, false]);
      for (const c of t.calls) {
        expect(c.prompt_token_ids!.length).toBeGreaterThan(5);
        expect(c.completion_token_ids!.length).toBeGreaterThan(0);
        expect(c.completion_logprobs).toHaveLength(c.completion_token_ids!.length);
      }
      // Each turn's prompt starts with the text of the previous prompt and completion. Its ids usually start with
      // the very ids sampled, but not always: sampling can pick a non-canonical split of a word (e.g. one rare token
      // where the tokenizer would use two), which the harness's re-sent text then retokenizes differently.
      for (let i = 1; i < t.calls.length; i++) {
        const before = [...t.calls[i - 1].prompt_token_ids!, ...t.calls[i - 1].completion_token_ids!];
        const next = t.calls[i].prompt_token_ids!;
        const text = (ids: number[]): string => vocab.detokenize(ids as Token[], true);
        if (!text(next).startsWith(text(before))) {
          // Gemma's chat template trims each message and closes it with <end_of_turn>: an answer sampled with
          // whitespace at an edge, or ended on <eos>, comes back otherwise.
          const answer = text(t.calls[i - 1].completion_token_ids!)
            .replace(/^\s+/, '')
            .replace(/\s*(<end_of_turn>|<eos>)?$/, '');
          expect(
            text(next).startsWith(`${text(t.calls[i - 1].prompt_token_ids!)}${answer}<end_of_turn>`),
            `turn ${i} of ${t.rollout_id}`,
          ).toBe(true);
          trimmed++;
          continue;
        }
        const exact = next.slice(0, before.length).every((id, k) => id === before[k]);
        if (!exact) console.log(`rollout ${t.rollout_id} turn ${i}: retokenized (same text, different ids)`);
        if (!exact) retokenized++;
      }
    }
    // Each such boundary is a merge break, and the diagnosis, decoding with the model's tokenizer, says why.
    const diag = await alight(['samples', 'diagnose', '--run', 'real', '--db', db, '--tokenizer', model, '--json']);
    expect(diag.code, diag.stderr).toBe(0);
    const result = JSON.parse(diag.stdout);
    expect(result.merge.breaks).toBe(retokenized + trimmed);
    expect(result.kinds.retokenization).toBe(retokenized);
    expect(result.kinds.template).toBe(trimmed);
  });

  it('says clearly when the model file is missing', async () => {
    const res = await alight([
      'record',
      '--serve',
      '/nowhere/model.gguf',
      '--db',
      join(tempDir(), 'x.db'),
      '--',
      'true',
    ]);
    expect(res.code).toBe(3);
    expect(res.stderr).toMatch(/no model file \/nowhere\/model\.gguf; pass a \.gguf path or one of: gemma3-270m/);
  });
});
