import type { Command } from 'commander';
import {
  type BuildFlags,
  buildFlags,
  type CurateFlags,
  curateFlags,
  type DiagnoseFlags,
  diagnoseFlags,
  type ShowFlags,
  showFlags,
} from './declared-samples.js';
import { define, group } from './define.js';

export function registerSamples(program: Command): void {
  const samples = group(program, 'samples', 'turn recorded rollouts into a training batch');
  define(samples, {
    name: 'build',
    description: "merge a run's calls into rows, compute advantages and loss weights, write batch.safetensors",
    options: buildFlags(),
    examples: [
      'alight samples build --run my-run --out batch.safetensors',
      'alight samples build --run my-run --advantage rloo --loss-norm token-mean --out b.safetensors',
    ],
    action: async (opts: BuildFlags) => (await import('../samples.js')).buildSamples(opts),
  });
  defineCurate(samples);
  define(samples, {
    name: 'diagnose',
    description: 'why calls of a run did not merge into one row: each break classified, the worst shown',
    options: diagnoseFlags(),
    examples: ['alight samples diagnose --run my-run --tokenizer gemma3-270m'],
    action: async (opts: DiagnoseFlags) => (await import('../samples.js')).diagnoseSamples(opts),
  });
  define(samples, {
    name: 'show',
    description: 'rows, lengths, masks, advantages and weights of a batch file',
    args: [['<batch>', 'a batch.safetensors']],
    options: showFlags(),
    examples: [
      'alight samples show batch.safetensors',
      'alight samples show batch.safetensors --tokenizer models/tiny/tokenizer.json',
    ],
    action: async (path: string, opts: ShowFlags) => (await import('../samples.js')).showSamples(path, opts),
  });
}

/** `samples curate`: recorded rollouts → supervised examples for `alight sft` (docs/training.md#sft). */
function defineCurate(samples: Command): void {
  define(samples, {
    name: 'curate',
    description:
      "the policy's own best rollouts of recorded runs as supervised examples (their token ids, the loss on what it " +
      'sampled): train.safetensors, val.safetensors for alight sft',
    options: curateFlags(),
    examples: [
      'alight samples curate --run probe-1 --filter "solved>=1" --min-reward 1 --out data/rft',
      'alight samples curate --run a --run b --select best-n --max-per-task 2 --val 20 --parquet --out data/rft',
      'alight samples curate --run probe-1 --filter "0<avg<1" --dry-run',
      'alight samples curate --run claude-code --min-reward 1 --render models/student --out data/distil',
    ],
    action: async (opts: CurateFlags) => (await import('../samples.js')).curateSamples(opts),
  });
}
