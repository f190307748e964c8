import { writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { probe } from '../../src/process/launch.js';
import { Store } from '../../src/store/store.js';
import { alight, FIXTURES } from '../helpers/cli.js';
import { tempDir } from '../helpers/gateway.js';
import { tinyModel } from '../helpers/tiny-model.js';

// `alight train --report-to`: two steps of the CPU trainer (validating after each) written to TensorBoard, W&B (offline) and MLflow (a local
// file store) through their own libraries, then read back with each one's own reader.
let model: string;
beforeAll(() => {
  model = tinyModel(1);
}, 120_000);

const trackersPython = join(
  process.env.ALIGHT_TRACKERS_ENV ?? join(homedir(), '.cache', 'alight', 'trackers'),
  'bin',
  'python',
);

function project(): { dir: string; db: string; tasks: string } {
  const dir = tempDir();
  const tasks = join(dir, 'tasks.jsonl');
  writeFileSync(
    tasks,
    [
      { id: 'count', prompt: 'Count to three.' },
      { id: 'year', prompt: 'What year is it?' },
    ]
      .map((t) => JSON.stringify(t))
      .join('\n'),
  );
  return { dir, db: join(dir, '.alight', 'alight.db'), tasks };
}

const trainArgs = (p: { tasks: string }, run: string, ...more: string[]) => [
  ...['train', '--model', model, '--tasks', p.tasks, '-n', '4', '--batch-size', '2', '--steps', '2', '--run', run],
  ...more,
  '--',
  process.execPath,
  join(FIXTURES, 'digits-harness.mjs'),
];

describe('alight train --report-to', () => {
  it('writes every step to TensorBoard, W&B (offline) and MLflow, as their own readers find', async () => {
    const p = project();
    const res = await alight(
      trainArgs(
        p,
        'tracked',
        ...['--report-to', 'tensorboard', '--report-to', 'wandb', '--report-to', 'mlflow'],
        ...['--val-tasks', p.tasks, '--val-every', '1'],
      ),
      { cwd: p.dir, env: { WANDB_API_KEY: '', WANDB_MODE: '' }, timeoutMs: 600_000 },
    );
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).not.toMatch(/tracker \w+:/);
    const store = Store.open(p.db);
    const steps = store.trainSteps('tracked');
    const metric = (name: string) => steps.map((s) => [s.step, (s.metrics as Record<string, number>)[name]]);
    const [rewards, validation] = [metric('reward_mean'), metric('val_reward')];
    store.close();
    const runDir = join(p.dir, '.alight', 'runs', 'tracked');
    const read = probe(trackersPython, [join(FIXTURES, 'read_trackers.py'), runDir]);
    expect(read.exitCode, read.stderr).toBe(0);
    const got = JSON.parse(read.stdout);
    const close = (pairs: number[][]) => pairs.map(([s, v]) => [s, Number(v.toFixed(5))]);
    const want = close(rewards);
    // Validation ran each step: its reward is a metric of its own in every tracker.
    expect(validation.every(([, v]) => typeof v === 'number')).toBe(true);
    for (const tracker of ['tensorboard', 'mlflow', 'wandb'])
      expect(close(got[tracker].val_reward)).toEqual(close(validation));
    expect(close(got.tensorboard.reward_mean)).toEqual(want);
    expect(got.tensorboard.tags).toEqual(expect.arrayContaining(['reward_mean', 'loss']));
    expect(got.tensorboard.samples).toEqual([0, 1]);
    expect(close(got.mlflow.reward_mean)).toEqual(want);
    expect(got.mlflow).toMatchObject({
      runs: 1,
      name: 'tracked',
      samples: ['samples/step-000000.json', 'samples/step-000001.json'],
    });
    expect(got.mlflow.params).toEqual(expect.arrayContaining(['optimiser.lr', 'rollouts.n', 'batch.size']));
    expect(close(got.wandb.reward_mean)).toEqual(want);
    expect(got.wandb.samples).toEqual([0, 1]);
    expect(got.wandb.config).toEqual(expect.arrayContaining(['optimiser.lr', 'rollouts.n']));
  }, 600_000);

  it('writes each step of an SFT run, its loss and validation loss, to all three as a training run', async () => {
    const p = project();
    const probeRun = await alight(trainArgs(p, 'probe'), { cwd: p.dir, timeoutMs: 600_000 });
    expect(probeRun.code, probeRun.stderr).toBe(0);
    const curate = ['samples', 'curate', '--run', 'probe', '--select', 'all', '--keep-truncated', '--val', '1'];
    const curated = await alight([...curate, '--out', 'curated'], { cwd: p.dir });
    expect(curated.code, curated.stderr).toBe(0);
    const trackers = ['--report-to', 'tensorboard', '--report-to', 'wandb', '--report-to', 'mlflow'];
    const sftArgs = [
      'sft',
      '--data',
      'curated',
      '--model',
      model,
      '--epochs',
      '1',
      '--batch-size',
      '2',
      '--save-every',
      '1',
    ];
    const res = await alight([...sftArgs, ...trackers, '--run', 'tuned'], {
      cwd: p.dir,
      env: { WANDB_API_KEY: '', WANDB_MODE: '' },
      timeoutMs: 600_000,
    });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).not.toMatch(/tracker \w+:/);
    const store = Store.open(p.db);
    const steps = store.trainSteps('tuned');
    store.close();
    const metric = (name: string) =>
      steps.map((s) => [s.step, Number((s.metrics as Record<string, number>)[name].toFixed(5))]);
    expect(steps.length).toBeGreaterThan(1);
    const read = probe(trackersPython, [
      join(FIXTURES, 'read_trackers.py'),
      join(p.dir, '.alight', 'runs', 'tuned'),
      'loss',
      'val_loss',
      'loss_tokens',
    ]);
    expect(read.exitCode, read.stderr).toBe(0);
    const got = JSON.parse(read.stdout);
    const close = (pairs: number[][]) => pairs.map(([s, v]) => [s, Number(v.toFixed(5))]);
    for (const tracker of ['tensorboard', 'mlflow', 'wandb'])
      for (const name of ['loss', 'val_loss', 'loss_tokens'])
        expect(close(got[tracker][name]), `${tracker} ${name}`).toEqual(metric(name));
    expect(got.mlflow.params).toEqual(expect.arrayContaining(['optimiser.lr', 'objective', 'epochs']));
  }, 600_000);

  it('reports a tracker that fails and trains on without it', async () => {
    const p = project();
    const res = await alight(trainArgs(p, 'broken', '--report-to', 'mlflow', '--report-to', 'tensorboard'), {
      cwd: p.dir,
      env: { MLFLOW_TRACKING_URI: 'bogus://nowhere' },
      timeoutMs: 600_000,
    });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toMatch(/tracker mlflow: .*bogus.*left out from now on/);
    const read = probe(trackersPython, [
      '-c',
      'import sys\nfrom tensorboard.backend.event_processing.event_accumulator import EventAccumulator as E\n' +
        'a = E(sys.argv[1]); a.Reload(); print(len(a.Scalars("reward_mean")))',
      join(p.dir, '.alight', 'runs', 'broken', 'tensorboard'),
    ]);
    expect(read.stdout.trim(), read.stderr).toBe('2');
  }, 600_000);
});
