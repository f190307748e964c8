// `npm run demo`: RL through a harness on this machine, no GPU, no network. A tiny character-level Llama is made
// from a seed (python -m alight_worker.tiny), and `alight train` runs the two-turn openai-SDK harness in
// examples/vowels/ (answer in lowercase vowels) against it: 4 tasks × 8 rollouts a step, GRPO, the torch worker
// updating and serving the weights.
// It ends with the first and last rewards, the served-policy check and the plot of the curves.
// ALIGHT_DEMO_BACKEND=verl runs the same job on verl 0.9.1's own workers instead (its FSDP actor, a vLLM server, Ray; on
// the CPU here through alight's platform plugin), setting up verl's virtualenv first (~5 GB from PyPI).
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runEntry } from '../commands/index.js';
import { AlightError, type ExitCodeValue } from '../src/errors.js';
import { ensurePythonEnv, PYTHON_DIR } from '../src/setup/python-env.js';
import { ensureVerlEnv } from '../src/setup/verl-env.js';
import type { StepMetrics } from '../src/train/events.js';
import { setupProgress } from '../src/ui/setup-progress.js';

const STEPS = Number(process.env.ALIGHT_DEMO_STEPS ?? 30);
// ALIGHT_DEMO_LORA_RANK=R trains a rank-R LoRA adapter instead of every weight, at LoRA's 10× learning rate, on
// every linear layer and the output layer: this model is made from a seed, its output layer is where the task is
// learned (the other layers alone move the vowels' share of the next token from 5% to 9% at most: docs/training.md).
const LORA_RANK = Number(process.env.ALIGHT_DEMO_LORA_RANK ?? 0);
const BACKEND = process.env.ALIGHT_DEMO_BACKEND ?? 'torch';
// The README's promise: the last 5 steps' mean reward beats the first 5 steps' by at least this much.
const MARGIN = 0.5;
const root = fileURLToPath(new URL('..', import.meta.url));
const bin = join(root, 'bin', 'alight.js');
const dir = mkdtempSync(join(tmpdir(), 'alight-train-demo-'));
const alight = async (...args: string[]): Promise<number> => {
  const [code] = await once(spawn(process.execPath, [bin, ...args], { cwd: dir, stdio: 'inherit' }), 'close');
  return code ?? 1;
};

await runEntry(async () => {
  console.log(`demo project in ${dir}\n`);
  // First run: alight's Python environment (torch and the worker's packages from PyPI, ~3 GB), with progress.
  const python = await ensurePythonEnv(setupProgress());
  execFileSync(python, ['-m', 'alight_worker.tiny', '--out', join(dir, 'model'), '--seed', '0'], {
    cwd: PYTHON_DIR,
    stdio: 'inherit',
  });
  if (BACKEND === 'verl') await ensureVerlEnv(setupProgress());
  const code = await alight(
    'train',
    '--backend',
    BACKEND,
    '--model',
    'model',
    '--tasks',
    join(root, 'examples/vowels/tasks.jsonl'),
    '-n',
    '8',
    '--batch-size',
    '4',
    '--steps',
    String(STEPS),
    '--lr',
    LORA_RANK > 0 ? '0.02' : '0.01',
    ...(LORA_RANK > 0 ? ['--lora-rank', String(LORA_RANK), '--lora-targets', 'all-linear,lm_head'] : []),
    '--seed',
    '0',
    '--save-every',
    '10',
    '--run',
    'demo',
    '--',
    'node',
    join(root, 'examples/vowels/harness.mjs'),
  );
  if (code !== 0) throw new AlightError(`alight train exited with ${code}`, code as ExitCodeValue);
  const plot = join(dir, 'curves.svg');
  const shown = JSON.parse(
    execFileSync(process.execPath, [bin, 'runs', 'show', 'demo', '--plot', plot, '--json'], {
      cwd: dir,
      encoding: 'utf8',
    }),
  );
  const metrics: StepMetrics[] = shown.steps.map((s: { metrics: StepMetrics }) => s.metrics);
  const rewards = metrics.map((m) => m.reward_mean!);
  const mean = (xs: number[]): number => xs.reduce((a, x) => a + x, 0) / xs.length;
  const [first, last] = [mean(rewards.slice(0, 5)), mean(rewards.slice(-5))];
  console.log(
    `\nmean reward, first 5 steps: ${first.toFixed(3)}; last 5 steps: ${last.toFixed(3)} (+${(last - first).toFixed(3)}; the README promises ≥ +${MARGIN})`,
  );
  const checked = metrics.map((m) => m.served_logprob_diff).filter((d) => d != null) as number[];
  console.log(
    `served-policy check: ${checked.length} of ${metrics.length} steps, ` +
      `largest difference ${Math.max(...checked).toExponential(1)} nats (${BACKEND})`,
  );
  console.log(`plot: ${plot}\nmetrics: node ${bin} runs show demo --db ${join(dir, '.alight', 'alight.db')}`);
  if (last - first < MARGIN)
    throw new AlightError(`the reward rose by ${(last - first).toFixed(3)}, less than the promised ${MARGIN}`);
});
