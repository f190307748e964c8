import type { Command } from 'commander';
import { type SftFlags, sftFlags, type TrainFlags, trainFlags } from './declared.js';
import { define } from './define.js';

export function registerTrain(program: Command): void {
  define(program, {
    name: 'train',
    description: 'RL through the harness: rollouts, batch, update on the Python worker, new weights served; repeat',
    args: [
      ['<cmd>', 'harness command'],
      ['[args...]', 'its arguments; {{field}} is replaced by the task field'],
    ],
    passThrough: true,
    options: trainFlags(),
    examples: [
      'alight train --model models/tiny --tasks tasks.jsonl -n 8 --batch-size 4 --steps 30 -- node harness.mjs',
      'alight train --resume train-20261130-1200-ab12 -- node harness.mjs',
      'alight train --model models/student --teacher .alight/runs/big/checkpoints/step-29 --task-reward off ' +
        '--tasks tasks.jsonl -- node harness.mjs',
      'alight train --backend verl --gpus 8 --model Qwen/Qwen2.5-7B-Instruct ' +
        '--from-db -n 8 --batch-size 32 -- python agent.py',
      'alight train --backend verl --gpus 8 --model ' +
        'Qwen/Qwen2.5-7B-Instruct --tasks t.jsonl --dry-run -- python agent.py',
    ],
    action: async (cmd: string, args: string[], opts: TrainFlags) =>
      (await import('../train.js')).trainCommand(cmd, args, opts),
  });
}

export function registerSft(program: Command): void {
  define(program, {
    name: 'sft',
    description:
      'supervised fine-tuning on curated examples (alight samples curate) on the torch worker, full weights or LoRA; ' +
      'RL from it with train --init-from',
    options: sftFlags(),
    examples: [
      'alight samples curate --run probe-1 --min-reward 1 --val 20 --out data/rft',
      'alight sft --data data/rft --model models/smollm2 --epochs 2 --batch-size 16 --lr 1e-5 --run rft-1',
      'alight train --init-from rft-1 --tasks tasks.jsonl -n 8 -- node harness.mjs',
      'alight sft --backend verl --gpus 8 --data data/rft --model Qwen/Qwen3-8B --batch-size 64 --run rft-8b',
    ],
    action: async (opts: SftFlags) => (await import('../sft.js')).sftCommand(opts),
  });
}
