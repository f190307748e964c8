import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { envPython } from '../../src/setup/python-env.js';
import { Store } from '../../src/store/store.js';
import { alight } from '../helpers/cli.js';
import { tempDir } from '../helpers/gateway.js';
import { smolLM2 } from '../helpers/real-model.js';

// The mechanics bench:learn relies on, on the smallest real model: SmolLM2-135M-Instruct converted from its GGUF,
// trained for two steps through the arithmetic harness (examples/arithmetic/, the openai SDK). No gain is asserted:
// that is bench:learn's to measure.
const example = join(import.meta.dirname, '..', '..', 'examples', 'arithmetic');
let model: string;

beforeAll(async () => {
  model = await smolLM2();
}, 900_000);

describe('alight train on a real pretrained model', () => {
  it("trains through the harness: each call's version, served logprobs the update's, the verifier's rewards", async () => {
    const dir = tempDir('alight-real-train-');
    const tasks = readFileSync(join(example, 'train.jsonl'), 'utf8').split('\n').slice(0, 4).join('\n');
    writeFileSync(join(dir, 'tasks.jsonl'), tasks);
    // dropOverlong: replies cut at the harness's max_tokens leave the loss (DAPO's overlong filtering).
    writeFileSync(
      join(dir, 'alight.config.yaml'),
      'train:\n  worker:\n    threads: 2\n  batch:\n    dropOverlong: true\n',
    );
    const args = ['train', '--model', model, '--tasks', 'tasks.jsonl', '-n', '4', '--batch-size', '2', '--steps', '2'];
    args.push(
      '--concurrency',
      '8',
      '--lr',
      '1e-5',
      '--run',
      'real',
      '--json',
      '--',
      'node',
      join(example, 'harness.mjs'),
    );
    const res = await alight(args, { cwd: dir, timeoutMs: 900_000 });
    expect(res.code, res.stderr).toBe(0);
    const store = Store.open(join(dir, '.alight', 'alight.db'));
    try {
      const steps = store.trainSteps('real');
      expect(steps).toHaveLength(2);
      for (const s of steps) {
        expect(s.metrics.rollouts_failed).toBe(0);
        // The update recomputes each served token's logprob before changing anything: k3 KL of ~0 means the served
        // policy is the one being trained, token for token.
        expect(s.metrics.kl_rollout as number).toBeLessThan(1e-6);
      }
      const calls = store.db
        .prepare(`SELECT r.id AS id, r.group_id AS g, c.model_version AS v, c.response AS response,
          c.finish_reason AS finish FROM calls c JOIN rollouts r ON r.id = c.rollout_id WHERE r.run = 'real' AND r.mode = 'train'`)
        .all() as { id: string; g: string; v: number; response: string; finish: string }[];
      expect(calls).toHaveLength(2 * 2 * 4);
      const stepOf = (c: { g: string }) => Number(/\/step(\d+)\./.exec(c.g)![1]);
      for (const c of calls) expect(c.v, c.g).toBe(stepOf(c));
      // Each step left out exactly its rollouts whose one call the engine cut at max_tokens.
      const cut = steps.map((_, s) => calls.filter((c) => stepOf(c) === s && c.finish === 'length').length);
      expect(steps.map((s) => s.metrics.dropped_overlong)).toEqual(cut);
      // Each reward is reasoning-gym's verifier on the recorded reply (Python, the original, not the harness's port).
      const cases = calls.map((c) => ({
        reply: JSON.parse(c.response).choices[0].message.content as string,
        task: store.getRollout(c.id)?.task_id,
      }));
      const script =
        'import json, re, sys\nfrom reasoning_gym.utils import compute_decimal_reward as r\n' +
        'def last(t):\n  n = re.findall(r"-?\\d+(?:\\.\\d+)?", t)\n  return n[-1] if n else t.strip()\n' +
        'print(json.dumps([r(last(c["reply"]), c["answer"]) for c in json.load(sys.stdin)]))';
      const answers = new Map(
        tasks
          .split('\n')
          .map((l) => JSON.parse(l) as { id: string; answer: string })
          .map((t) => [t.id, t.answer]),
      );
      const input = JSON.stringify(cases.map((c) => ({ reply: c.reply, answer: answers.get(c.task ?? '') })));
      const expected = JSON.parse(execFileSync(envPython(), ['-c', script], { input }).toString()) as number[];
      expect(calls.map((c) => store.lastReward(c.id)?.value)).toEqual(expected);
    } finally {
      store.close();
    }
  }, 900_000);
});
