import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { verlPython } from '../../src/setup/verl-env.js';
import { alight, FIXTURES } from '../helpers/cli.js';
import { tempDir } from '../helpers/gateway.js';
import { processMark } from '../helpers/processes.js';
import { pytestSuite } from '../helpers/pytest-suite.js';
import { tinyModel } from '../helpers/tiny-model.js';

// python/tests_verl in the verl backend's own virtualenv (torch 2.11, verl 0.9.1 with its trainer's dependencies, Ray),
// made on first use as `alight doctor --setup --backend verl` makes it (~3 GB from PyPI, about 2 min here).
pytestSuite(verlPython()!, 'python/tests_verl', { RAY_AUTH_MODE: 'disabled' });

// What a user without the right cluster sees: a clear error, and no process left behind.
describe('alight train --backend verl, refusals', () => {
  let model: string;
  let dir: string;
  beforeAll(() => {
    model = tinyModel(1);
    dir = tempDir();
    writeFileSync(join(dir, 'tasks.jsonl'), JSON.stringify({ id: 't', prompt: 'Count.' }));
  }, 120_000);
  const train = (...flags: string[]) =>
    alight(
      [
        'train',
        '--backend',
        'verl',
        '--tasks',
        join(dir, 'tasks.jsonl'),
        '--run',
        `r${Math.random().toString(36).slice(2, 8)}`,
        ...flags,
        '--',
        process.execPath,
        join(FIXTURES, 'digits-harness.mjs'),
      ],
      { cwd: dir, timeoutMs: 180_000, env: { RAY_AUTH_MODE: 'disabled', ...mark.env } },
    );
  // Every process these runs start (worker, Ray, vLLM) carries the mark; none may be left once the CLI has exited.
  const mark = processMark();

  it(
    'refuses several nodes without a Ray cluster and a tensor-parallel ' +
      'size that does not divide the GPUs, before starting anything',
    async () => {
      const nodes = await train('--model', model, '--gpus', '8', '--nodes', '2');
      expect([nodes.code, nodes.stderr]).toEqual([2, expect.stringMatching(/--nodes 2 needs a Ray cluster/)]);
      const tp = await train('--model', model, '--gpus', '6', '--tensor-parallel', '4');
      expect([tp.code, tp.stderr]).toEqual([
        2,
        expect.stringMatching(/tensor parallel size 4 does not divide --gpus 6/),
      ]);
    },
  );

  it('says a model that does not exist plainly; the worker and Ray are gone after', async () => {
    const missing = await train('--model', join(dir, 'no-model'));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/the model .*no-model does not exist/);
    expect(await mark.left()).toEqual([]);
  }, 180_000);

  it("--dry-run prints the composed verl config with alight's loss", async () => {
    const res = await alight(
      [
        'train',
        '--backend',
        'verl',
        '--gpus',
        '8',
        '--model',
        'Qwen/Qwen2.5-7B-Instruct',
        '--kl-coef',
        '0.01',
        '--dry-run',
        '--',
        'x',
      ],
      { cwd: dir, timeoutMs: 120_000 },
    );
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/# preset one-node: 8 GPU\(s\), vLLM tensor parallel 2/);
    expect(res.stdout).toMatch(/loss_mode: alight/);
    expect(res.stdout).toMatch(/use_kl_loss: true/);
    expect(res.stdout).toMatch(/path: Qwen\/Qwen2.5-7B-Instruct/);
    // The rollout's logprobs must be those of the sampling distribution (verl's default; alight must not change it).
    expect(res.stdout).toMatch(
      /\nactor_rollout_ref:\n(?: {2}.*\n)*? {2}rollout:\n(?: {4}.*\n)*? {4}logprobs_mode: processed_logprobs\n/,
    );
  }, 120_000);

  it('--gpus 8 alone chooses verl; with --backend torch it is refused, not ignored', async () => {
    const chosen = await alight(
      ['train', '--gpus', '8', '--model', 'Qwen/Qwen2.5-7B-Instruct', '--dry-run', '--', 'x'],
      {
        cwd: dir,
        timeoutMs: 120_000,
      },
    );
    expect(chosen.code, chosen.stderr).toBe(0);
    expect(chosen.stdout).toMatch(/# preset one-node: 8 GPU\(s\)/);
    const refused = await alight(['train', '--backend', 'torch', '--gpus', '8', '--dry-run', '--', 'x'], { cwd: dir });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/--gpus 8: the torch backend trains on one device; use --backend verl/);
  }, 120_000);

  it('alight doctor --backend verl lists the stack and says what this machine lacks', async () => {
    const res = await alight(['doctor', '--backend', 'verl', '--json']);
    expect(res.code, res.stderr).toBe(0);
    const report = JSON.parse(res.stdout);
    expect(
      Object.fromEntries(report.packages.map((p: { name: string; version: string }) => [p.name, p.version])),
    ).toMatchObject({
      torch: expect.stringMatching(/^2\.11\.0/),
      verl: '0.9.1',
      // vLLM's CPU build of the version verl pins, here where there is no CUDA.
      vllm: '0.24.0+cpu',
      ray: expect.any(String),
    });
    expect(report.fixes).toEqual([expect.stringMatching(/^no CUDA GPU/)]);
  });

  it('--device cuda without a CUDA GPU is refused before anything starts; a vLLM that fails to start ' +
    '(real vLLM, more memory asked than there is) says so with its log, and leaves no process', async () => {
    const cuda = await alight(['serve-vllm', model, '--device', 'cuda', '--db', join(dir, 'v.db')], { cwd: dir });
    expect([cuda.code, cuda.stderr]).toEqual([2, expect.stringMatching(/--device cuda, but nvidia-smi lists no CUDA/)]);
    const rec = await alight(
      [
        'record',
        '--serve-vllm',
        model,
        '--device',
        'cuda',
        '--tasks',
        join(dir, 'tasks.jsonl'),
        '--db',
        join(dir, 'v.db'),
        '--',
        process.execPath,
        join(FIXTURES, 'digits-harness.mjs'),
      ],
      { cwd: dir },
    );
    expect([rec.code, rec.stderr]).toEqual([2, expect.stringMatching(/--device cuda, but nvidia-smi lists no CUDA/)]);
    const served = await alight(
      ['serve-vllm', model, '--device', 'cpu', '--gpu-memory-utilization', '0.99', '--db', join(dir, 'v.db')],
      { cwd: dir, timeoutMs: 300_000, env: mark.env },
    );
    expect(served.code).toBe(1);
    expect(served.stderr).toMatch(
      /vLLM exited \(1\) before it was ready \(not enough free memory: pass a smaller --gpu-memory-utilization\); the end of .*vllm\.log:/,
    );
    expect(await mark.left()).toEqual([]);
  }, 600_000);
});
