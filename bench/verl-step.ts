/**
 * A real model's steps on verl against the torch worker: SmolLM2-135M-Instruct on bench:learn's chain-sum recipe (its
 * tasks, harness, Dr. GRPO, 8 tasks × 8 rollouts a step, seed), a few steps each through `alight train`, the same
 * per-step metrics from both, and the wall time of a step (after the first) for each; verl on the CPU here, through
 * alight's platform plugin. No learning claim: bench:learn stays on the torch worker while verl is slower here. vLLM's
 * share of the RAM is raised to a quarter: on the CPU its worker's own memory (SmolLM2 in float32, kept twice) counts
 * against the share, and verl's default there (a tenth) leaves no KV cache for this model.
 *
 *   npm run bench:verl     # BENCH_VERL_STEPS (3)
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { runEntry } from '../commands/index.js';
import { ensureVerlEnv } from '../src/setup/verl-env.js';
import { setupProgress } from '../src/ui/setup-progress.js';
import { alightTrain, benchModel, env, median, settings, work } from './learn/common.js';

const STEPS = env('BENCH_VERL_STEPS', 3);
const shared = [
  'loss',
  'grad_norm',
  'entropy',
  'kl_rollout',
  'reward_mean',
  'rows',
  'loss_tokens',
  'served_logprob_diff',
];

async function side(backend: 'torch' | 'verl', model: string) {
  const dir = join(work, `verl-step-${backend}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const extra = [
    '--save-every',
    '0',
    '--backend',
    backend,
    ...(backend === 'verl' ? ['--gpus', '1', '--gpu-memory-utilization', '0.25'] : []),
  ];
  const { seconds, steps } = await alightTrain({
    dir,
    run: backend,
    init: ['--model', model],
    steps: STEPS,
    lr: settings.lr,
    extra,
  });
  const wall = steps.slice(1).map((s) => s.step_s ?? 0);
  return { backend, seconds, steps, stepS: median(wall) };
}

await runEntry(async () => {
  await ensureVerlEnv(setupProgress());
  const model = await benchModel();
  const torch = await side('torch', model);
  const verl = await side('verl', model);
  console.log(`\n| backend | run wall (s) | median step after the first (s) | ${shared.join(' | ')} (last step) |`);
  console.log(
    `|---|---|---|${shared
      .slice(1)
      .map(() => '---')
      .join('|')}|`,
  );
  for (const s of [torch, verl]) {
    const last = s.steps.at(-1)!;
    const cells = shared.map((k) => (last[k] == null ? '–' : Number(last[k]).toPrecision(3)));
    console.log(`| ${s.backend} | ${s.seconds.toFixed(0)} | ${s.stepS.toFixed(1)} | ${cells.join(' | ')} |`);
  }
  console.log(`\nverl / torch, a step: ${(verl.stepS / torch.stepS).toFixed(2)}×`);
  const missing = Object.keys(torch.steps[0]).filter((k) => !(k in verl.steps[0]));
  console.log(`metrics the torch worker reports and verl does not: ${missing.join(', ') || 'none'}`);
});
