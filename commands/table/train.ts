import { type Command, Option } from 'commander';
import {
  concurrencyOption,
  configOption,
  int,
  jsonOption,
  judgeOptions,
  rolloutsOption,
  runnerOptions,
  runOption,
  storeOptions,
} from '../options.js';
import type { SftFlags } from '../sft.js';
import type { TrainFlags } from '../train.js';
import { define } from './define.js';

/** Where the policy trains and is served: the backend, its cluster, its vLLM. */
const backendOptions = (): Option[] => [
  configOption('--backend <backend>', 'train.backend'),
  configOption('--model <folder>', 'train.model'),
  configOption('--serve-vllm', 'train.serveVllm'),
  configOption('--device <device>', 'train.vllmDevice'),
  configOption('--gpus <n>', 'train.gpus'),
  configOption('--nodes <m>', 'train.nodes'),
  configOption('--ray-address <addr>', 'train.rayAddress'),
  configOption('--tensor-parallel <tp>', 'train.tensorParallel'),
  configOption('--gpu-memory-utilization <f>', 'train.gpuMemoryUtilization'),
  configOption('--old-logprobs <source>', 'train.oldLogprobs'),
  configOption('--verl <key=value>', 'train.verl'),
  new Option('--dry-run', 'print the resolved settings (verl: the composed verl config) and start nothing'),
];

/** LoRA: what trains (an adapter, the base frozen) instead of every weight. */
const loraOptions = (): Option[] => [
  configOption('--lora-rank <r>', 'train.lora.rank'),
  configOption('--lora-alpha <a>', 'train.lora.alpha'),
  configOption('--lora-dropout <p>', 'train.lora.dropout'),
  configOption('--lora-targets <names>', 'train.lora.targets'),
  configOption('--lora-from <adapter>', 'train.lora.from'),
];

/** On-policy distillation: a teacher scores the student's own tokens. */
const distillOptions = (): Option[] => [
  configOption('--teacher <url|folder>', 'train.distill.teacher'),
  configOption('--distill-coef <λ>', 'train.distill.coef'),
  configOption('--task-reward <on|off>', 'train.distill.taskReward'),
];

/** The data, the steps and the algorithm. */
const loopOptions = (): Option[] => [
  configOption('--tasks <file.jsonl>', 'train.tasks'),
  configOption('--from-db', 'train.fromDb'),
  rolloutsOption('train.n'),
  configOption('--batch-size <b>', 'train.batchSize'),
  configOption('--steps <s>', 'train.steps'),
  concurrencyOption('train.concurrency'),
  configOption('--lr <rate>', 'train.lr'),
  configOption('--advantage <estimator>', 'train.advantage'),
  configOption('--loss-norm <norm>', 'train.lossNorm'),
  configOption('--kl-coef <c>', 'train.klCoef'),
  configOption('--max-response-tokens <n>', 'train.maxResponseTokens'),
  configOption('--reward-cmd <cmd>', 'train.rewardCmd'),
  ...judgeOptions(),
  configOption('--val-tasks <file.jsonl>', 'train.valTasks'),
  configOption('--val-every <n>', 'train.valEvery'),
  configOption('--save-every <n>', 'train.saveEvery'),
  configOption('--seed <seed>', 'train.seed'),
  configOption('--async-groups <g>', 'train.asyncGroups'),
  configOption('--max-staleness <v>', 'train.maxStaleness'),
  configOption('--is-correction <kind>', 'train.isCorrection'),
  configOption('--is-cap <c>', 'train.isCap'),
  configOption('--timeout <seconds>', 'train.timeoutS'),
  configOption('--report-to <tracker>', 'train.reportTo'),
];

export function registerTrain(program: Command): void {
  define(program, {
    name: 'train',
    description: 'RL through the harness: rollouts, batch, update on the Python worker, new weights served; repeat',
    args: [
      ['<cmd>', 'harness command'],
      ['[args...]', 'its arguments; {{field}} is replaced by the task field'],
    ],
    passThrough: true,
    options: [
      ...backendOptions(),
      ...loopOptions(),
      ...distillOptions(),
      ...loraOptions(),
      new Option(
        '--init-from <run>',
        'start from the last checkpoint of this run (alight sft, or train): model or adapter',
      ),
      runOption(),
      new Option('--resume <run>', 'continue this run from its last checkpoint, same data order'),
      configOption('--port <port>', 'gateway.port', 'gateway port; 0 picks a free one'),
      ...runnerOptions(),
      ...storeOptions(),
      jsonOption('print the result as JSON'),
    ],
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
    options: [
      new Option(
        '--data <path>',
        "samples curate's folder (train.safetensors, val.safetensors) or one file",
      ).makeOptionMandatory(),
      new Option('--epochs <n>', 'passes over the examples').argParser(int).default(2),
      configOption('--model <folder>', 'train.model'),
      configOption(
        '--backend <backend>',
        'train.backend',
        "torch: the PyTorch worker; verl: verl's SFT trainer (FSDP)",
      ),
      configOption('--gpus <n>', 'train.gpus'),
      configOption('--verl <key=value>', 'train.verl'),
      new Option('--dry-run', "with --backend verl: print verl's composed SFT config and start nothing"),
      configOption('--batch-size <b>', 'train.batchSize', 'examples per step (config train.batchSize)'),
      configOption('--lr <rate>', 'train.lr'),
      configOption('--seed <seed>', 'train.seed'),
      new Option('--save-every <n>', 'checkpoint every N steps (default: after the last only)').argParser(int),
      configOption('--report-to <tracker>', 'train.reportTo'),
      ...loraOptions(),
      runOption(),
      ...storeOptions(),
      jsonOption('print the result as JSON'),
    ],
    examples: [
      'alight samples curate --run probe-1 --min-reward 1 --val 20 --out data/rft',
      'alight sft --data data/rft --model models/smollm2 --epochs 2 --batch-size 16 --lr 1e-5 --run rft-1',
      'alight train --init-from rft-1 --tasks tasks.jsonl -n 8 -- node harness.mjs',
      'alight sft --backend verl --gpus 8 --data data/rft --model Qwen/Qwen3-8B --batch-size 64 --run rft-8b',
    ],
    action: async (opts: SftFlags) => (await import('../sft.js')).sftCommand(opts),
  });
}
