import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { readSafetensors } from '../../src/samples/safetensors.js';
import { envPython } from '../../src/setup/python-env.js';
import { Store } from '../../src/store/store.js';
import { trainingWorkerSettings } from '../../src/train/workers.js';
import { Worker } from '../../src/worker/client.js';
import { alight } from '../helpers/cli.js';
import { tinyModel } from '../helpers/tiny-model.js';
import { HARNESS, project, stepsOf, trainArgs } from '../helpers/train-project.js';

// record → curate → SFT → RL on CPU: a tiny seed-made Llama's own rollouts of the held-back digits task (recorded by
// a one-step train run: all its rollouts sample the initial policy, before the update), 32 a task, the best kept with
// their recorded token ids, supervised fine-tuning on them, and RL started from its checkpoint.
let model: string;
let p: ReturnType<typeof project>;
beforeAll(async () => {
  model = tinyModel(1);
  p = project([
    { id: 'count', prompt: 'Count to three.' },
    { id: 'year', prompt: 'What year is it?' },
  ]);
  const probe = await alight(
    [...trainArgs(model, p, 1), '-n', '32', '--save-every', '0', '--run', 'probe', '--', process.execPath, HARNESS],
    { cwd: p.dir, timeoutMs: 300_000 },
  );
  expect(probe.code, probe.stderr).toBe(0);
}, 600_000);

type Tensors = { input_ids: Int32Array; loss_mask: Uint8Array; row_offsets: BigInt64Array; rollout_index: Int32Array };

/** Each example's tokens and loss mask, by rollout id, from a curated file. */
function examplesOf(file: string): Map<string, { tokens: number[]; mask: number[] }> {
  const { tensors, metadata } = readSafetensors(file);
  const t = tensors as unknown as Tensors;
  const rollouts = JSON.parse(metadata.alight).rollouts as { rollout_id: string }[];
  const out = new Map<string, { tokens: number[]; mask: number[] }>();
  for (let b = 0; b + 1 < t.row_offsets.length; b++) {
    const [s, e] = [Number(t.row_offsets[b]), Number(t.row_offsets[b + 1])];
    const id = rollouts[t.rollout_index[b]].rollout_id;
    const prev = out.get(id) ?? { tokens: [], mask: [] };
    out.set(id, {
      tokens: [...prev.tokens, ...t.input_ids.slice(s, e)],
      mask: [...prev.mask, ...t.loss_mask.slice(s, e)],
    });
  }
  return out;
}

describe('alight samples curate', () => {
  it("keeps the policy's own rollouts exactly: the recorded ids, the loss on exactly the sampled tokens", async () => {
    // The digits harness asks for 6 tokens, so every reply is cut at max_tokens: kept here on purpose.
    const keep = ['--keep-truncated', '--out', 'all', '--parquet'];
    const res = await alight(['samples', 'curate', '--run', 'probe', '--select', 'all', ...keep], { cwd: p.dir });
    expect(res.code, res.stderr).toBe(0);
    const examples = examplesOf(join(p.dir, 'all', 'train.safetensors'));
    const store = Store.open(p.db);
    try {
      const rollouts = store.rolloutSummaries({ run: 'probe' }).filter((r) => r.state === 'succeeded');
      expect(examples.size).toBe(rollouts.length);
      for (const [id, ex] of examples) {
        const [call] = store.calls.tokenCalls(id);
        expect(ex.tokens).toEqual([...call.promptIds!, ...call.completionIds!]);
        expect(ex.mask).toEqual([...call.promptIds!.map(() => 0), ...call.completionIds!.map(() => 1)]);
      }
    } finally {
      store.close();
    }
    // The Parquet export holds the same rows, as pyarrow reads them.
    const read = execFileSync(envPython(), [
      '-c',
      'import sys, json, pyarrow.parquet as pq; t = pq.read_table(sys.argv[1]).to_pylist(); ' +
        'print(json.dumps({r["rollout_id"]: [r["input_ids"], r["loss_mask"]] for r in t}))',
      join(p.dir, 'all', 'train.parquet'),
    ]).toString();
    const parquet = JSON.parse(read) as Record<string, [number[], number[]]>;
    expect(Object.keys(parquet).length).toBe(examples.size);
    for (const [id, ex] of examples) expect(parquet[id]).toEqual([ex.tokens, ex.mask]);
  }, 120_000);

  it('counts without writing on --dry-run, says why nothing is left, and refuses a filter it cannot read', async () => {
    const curate = (args: string[]) => alight(['samples', 'curate', '--run', 'probe', ...args], { cwd: p.dir });
    const dry = await curate([
      '--filter',
      'solved>=1 and n==32',
      '--solved-at',
      '0.3',
      '--keep-truncated',
      '--dry-run',
    ]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/dry run: nothing written/);
    expect(dry.stdout).toMatch(/64 rollouts of 2 tasks/);
    expect(readdirSync(p.dir)).not.toContain('dry');
    // Nothing left is an error that counts what was left out under its reason, and writes nothing.
    const none = await curate(['--min-reward', '2', '--keep-truncated', '--out', 'none']);
    expect(none.code).toBe(3);
    expect(none.stderr).toMatch(/no example left from 64 rollouts .*64 min-reward/);
    expect(existsSync(join(p.dir, 'none'))).toBe(false);
    const bad = await alight(['samples', 'curate', '--run', 'probe', '--filter', 'avg<1; rm -rf /', '--dry-run'], {
      cwd: p.dir,
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--filter "avg<1; rm -rf \/": cannot read "; rm -rf \/"/);
    expect(bad.stderr).not.toMatch(/at .*\.js:\d+/);
  }, 60_000);
});

describe('alight sft', () => {
  it("learns from the best rollouts, and RL started from it begins near their reward, not the base's", async () => {
    // The rollouts with at least three digits of six: a few of the 64.
    const best = ['--select', 'all', '--min-reward', '0.5', '--keep-truncated', '--out', 'best'];
    const curate = await alight(['samples', 'curate', '--run', 'probe', ...best], { cwd: p.dir });
    expect(curate.code, curate.stderr).toBe(0);
    const settings = ['--epochs', '30', '--batch-size', '4', '--lr', '0.02', '--run', 'sft'];
    const sft = await alight(['sft', '--data', 'best', '--model', model, ...settings], {
      cwd: p.dir,
      timeoutMs: 300_000,
    });
    expect(sft.code, sft.stderr).toBe(0);
    const steps = stepsOf(p.db, 'sft');
    const losses = steps.map((s) => s.metrics.loss as number);
    expect(losses.at(-1)!, `losses ${losses.map((l) => l.toFixed(3)).join(' ')}`).toBeLessThan(losses[0]);
    const checkpoint = steps.at(-1)!.checkpoint!;
    expect(readdirSync(checkpoint)).toContain('model.safetensors');
    expect(steps.slice(0, -1).every((s) => s.checkpoint === null)).toBe(true);

    const fromSft = [...trainArgs(model, p, 1).filter((a) => a !== model && a !== '--model'), '--init-from', 'sft'];
    const rl = await alight([...fromSft, '--run', 'rl', '--', process.execPath, HARNESS], {
      cwd: p.dir,
      timeoutMs: 300_000,
    });
    expect(rl.code, rl.stderr).toBe(0);
    const base = stepsOf(p.db, 'probe').map((s) => s.metrics.reward_mean as number);
    const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / xs.length;
    const start = stepsOf(p.db, 'rl')[0].metrics.reward_mean as number;
    expect(start, `base ${base.map((r) => r.toFixed(2)).join(' ')}`).toBeGreaterThan(mean(base) + 0.15);
    // The checkpoint is the whole model: a --model beside it is refused, not silently preferred.
    const both = await alight([...fromSft, '--model', model, '--run', 'rl2', '--', process.execPath, HARNESS], {
      cwd: p.dir,
    });
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/--init-from gives the model \(full weights\): drop --model/);
  }, 600_000);

  it("trains the same examples with verl's own SFT trainer (on the CPU here): alight's loss, a checkpoint RL starts from", async () => {
    const best = ['--select', 'all', '--min-reward', '0.5', '--keep-truncated', '--out', 'vbest'];
    expect((await alight(['samples', 'curate', '--run', 'probe', ...best], { cwd: p.dir })).code).toBe(0);
    const file = join(p.dir, 'vbest', 'train.safetensors');
    const rows = Number(readSafetensors(file).tensors.row_offsets.length) - 1;
    // alight's own loss of these rows under the initial weights: the torch worker's.
    const worker = Worker.start({ python: envPython(), logFile: join(p.dir, 'reference.log') });
    let reference: number;
    try {
      const { train } = configSchema.parse({ train: { model } });
      await worker.call('init', trainingWorkerSettings({ c: train, objective: 'sft' }), 300_000);
      reference = (await worker.call('eval_loss', { batch_path: file }, 300_000)).loss;
    } finally {
      await worker.stop();
    }
    // Every row in each step: verl's first loss is of the initial weights on all of them.
    const settings = ['--epochs', '20', '--batch-size', String(rows), '--lr', '0.02', '--run', 'verl-sft'];
    const args = ['sft', '--backend', 'verl', '--data', 'vbest', '--model', model, ...settings];
    const dry = await alight([...args, '--dry-run', '--json'], { cwd: p.dir, timeoutMs: 600_000 });
    expect(dry.code, dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout).composed).toMatch(/name: AlightSftDataset/);
    const sft = await alight(args, { cwd: p.dir, timeoutMs: 900_000 });
    expect(sft.code, sft.stderr).toBe(0);
    expect(sft.stderr).toMatch(/no GPU here: verl's SFT trainer runs on the CPU/);
    const steps = stepsOf(p.db, 'verl-sft');
    expect(steps).toHaveLength(20);
    const losses = steps.map((s) => s.metrics.loss as number);
    expect(Math.abs(losses[0] - reference)).toBeLessThan(1e-4);
    expect(losses.at(-1)!, `losses ${losses.map((l) => l.toFixed(3)).join(' ')}`).toBeLessThan(losses[0] - 0.5);
    const checkpoint = steps.at(-1)!.checkpoint!;
    expect(readdirSync(checkpoint)).toContain('model.safetensors');

    const fromSft = [
      ...trainArgs(model, p, 1).filter((a) => a !== model && a !== '--model'),
      '--init-from',
      'verl-sft',
    ];
    const rl = await alight([...fromSft, '--run', 'rl-verl', '--', process.execPath, HARNESS], {
      cwd: p.dir,
      timeoutMs: 300_000,
    });
    expect(rl.code, rl.stderr).toBe(0);
    const base = stepsOf(p.db, 'probe').map((s) => s.metrics.reward_mean as number);
    const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / xs.length;
    const start = stepsOf(p.db, 'rl-verl')[0].metrics.reward_mean as number;
    expect(start, `base ${base.map((r) => r.toFixed(2)).join(' ')}`).toBeGreaterThan(mean(base) + 0.15);
  }, 1_800_000);

  it('trains a LoRA adapter alone, and RL continues that adapter on its base', async () => {
    const settings = ['--epochs', '3', '--batch-size', '4', '--lora-rank', '4', '--lr', '0.02', '--run', 'sft-lora'];
    const sft = await alight(['sft', '--data', 'best', '--model', model, ...settings], {
      cwd: p.dir,
      timeoutMs: 300_000,
    });
    expect(sft.code, sft.stderr).toBe(0);
    const checkpoint = stepsOf(p.db, 'sft-lora').at(-1)!.checkpoint!;
    expect(readdirSync(checkpoint)).toEqual(
      expect.arrayContaining(['adapter_model.safetensors', 'adapter_config.json']),
    );
    expect(readdirSync(checkpoint)).not.toContain('model.safetensors');
    const fromSft = [
      ...trainArgs(model, p, 1).filter((a) => a !== model && a !== '--model'),
      '--init-from',
      'sft-lora',
    ];
    const rl = await alight([...fromSft, '--run', 'rl-lora', '--', process.execPath, HARNESS], {
      cwd: p.dir,
      timeoutMs: 300_000,
    });
    expect(rl.code, rl.stderr).toBe(0);
    const store = Store.open(p.db);
    try {
      const train = JSON.parse(store.getRun('rl-lora')!.config!).train;
      expect(train.lora.from).toBe(checkpoint);
      expect(train.model).toBe(model);
    } finally {
      store.close();
    }
  }, 600_000);

  it('refuses a file that is not curated examples, and leaves it as it was', async () => {
    const res = await alight(['sft', '--data', join(p.dir, 'tasks.jsonl'), '--model', model], { cwd: p.dir });
    expect(res.code).toBe(3);
    expect(res.stderr).toMatch(/not a file of curated examples|cannot read/);
    expect(existsSync(join(p.dir, 'tasks.jsonl'))).toBe(true);
  }, 60_000);
});
