import { type Command, Option } from 'commander';
import {
  concurrencyOption,
  configOption,
  jsonOption,
  rolloutsOption,
  runnerOptions,
  runOption,
  storeOptions,
} from '../options.js';
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
      ...loraOptions(),
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
      'alight train --backend verl --gpus 8 --model Qwen/Qwen2.5-7B-Instruct ' +
        '--from-db -n 8 --batch-size 32 -- python agent.py',
      'alight train --backend verl --gpus 8 --model ' +
        'Qwen/Qwen2.5-7B-Instruct --tasks t.jsonl --dry-run -- python agent.py',
    ],
    action: async (cmd: string, args: string[], opts: TrainFlags) =>
      (await import('../train.js')).trainCommand(cmd, args, opts),
  });
}
