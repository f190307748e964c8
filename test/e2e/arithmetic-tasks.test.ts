import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { computeDecimalReward, finalAnswer } from '../../examples/arithmetic/verifier.mjs';
import { envPython } from '../../src/setup/python-env.js';
import { tempDir } from '../helpers/gateway.js';

// The arithmetic suite (examples/arithmetic/): its split is what reasoning-gym's seeded generator makes, the held-out
// questions are never trained on, and the harness's JavaScript verifier scores as reasoning-gym's Python one does.
const dir = join(import.meta.dirname, '..', '..', 'examples', 'arithmetic');
const read = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { id: string; question: string; answer: string });

describe('the arithmetic task suite', () => {
  it('is the seeded generator output, with a held-out split of 400 disjoint from train', () => {
    const out = tempDir('alight-arith-');
    execFileSync(envPython(), [join(dir, 'make_tasks.py'), '--out', out]);
    for (const split of ['train.jsonl', 'heldout.jsonl'])
      expect(readFileSync(join(out, split), 'utf8'), split).toBe(readFileSync(join(dir, split), 'utf8'));
    const [train, held] = [read(join(dir, 'train.jsonl')), read(join(dir, 'heldout.jsonl'))];
    expect(held).toHaveLength(400);
    expect(train.length).toBeGreaterThan(1500);
    const trained = new Set(train.map((t) => t.question));
    expect(held.filter((t) => trained.has(t.question))).toEqual([]);
  });

  it("scores replies exactly as reasoning-gym's verifier does", () => {
    const held = read(join(dir, 'heldout.jsonl')).slice(0, 40);
    // Replies of the kinds the model writes, and the edge cases of Python's Decimal the verifier leans on.
    const replies = [
      ...held.flatMap((t) => [`${t.question.slice(-12)} ${t.answer}`, `The answer is ${Number(t.answer) + 1}.`]),
      '8 + 8 = 16.0',
      'so -0',
      '1,000',
      'no number here',
      '',
      '007',
      '12.50',
      'x=3e2',
      '+5',
      '.5',
      '5.',
      'inf',
      '1_000',
    ];
    const cases = replies.flatMap((reply, i) => {
      const oracle = held[i % held.length].answer;
      return [
        { answer: finalAnswer(reply), oracle },
        { answer: reply, oracle },
        { answer: reply, oracle: '16' },
      ];
    });
    const script =
      'import json, sys\nfrom reasoning_gym.utils import compute_decimal_reward as r\n' +
      'print(json.dumps([r(c["answer"], c["oracle"]) for c in json.load(sys.stdin)]))';
    const python = JSON.parse(execFileSync(envPython(), ['-c', script], { input: JSON.stringify(cases) }).toString());
    expect(cases.map((c) => computeDecimalReward(c.answer, c.oracle))).toEqual(python);
    expect(new Set(python).size).toBeGreaterThan(2); // passes, fails and partial credit all occur
  });
});
