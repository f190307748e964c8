import { Option } from 'commander';
import { alwaysSet, type FlagsOf, flag, onlyWith } from '../flags.js';
import {
  concurrencyOption,
  configOption,
  engineFlags,
  int,
  jsonOption,
  judgeFlags,
  rolloutsOption,
  runnerFlags,
  runOption,
  storeFlags,
} from '../options.js';

// The flags of record, train and sft, apart from their rows in the table: each command's module reads their type and
// their config keys, and the row loads that module, so declared in the row's file the two would import each other.
// Every other area's commands are declared the same way, in declared-<area>.ts beside this file.

/** The upstream's kind and model name: set for a URL, refused with an engine alight starts (which sets both). */
const upstreamDetails = () => ({
  upstreamKind: configOption('--upstream-kind <kind>', 'upstream.kind').conflicts([
    'serve',
    'serveVllm',
    'serveWorker',
  ]),
  model: configOption('--model <name>', 'upstream.model').conflicts(['serve', 'serveVllm', 'serveWorker']),
});

/** `alight record`'s flags, in --help order; RecordFlags is their type. */
export const recordFlags = () => ({
  ...engineFlags(),
  ...upstreamDetails(),
  run: runOption(),
  tasks: flag<string>(new Option('--tasks <file.jsonl>', 'one task per line; id or instance_id names it')),
  n: onlyWith(rolloutsOption('record.n'), 'tasks'),
  concurrency: onlyWith(concurrencyOption('record.concurrency'), 'tasks'),
  timeout: onlyWith(configOption('--timeout <seconds>', 'record.timeoutS'), 'tasks'),
  rewardCmd: configOption('--reward-cmd <cmd>', 'record.rewardCmd'),
  ...judgeFlags(),
  port: configOption('--port <port>', 'gateway.port', 'gateway port; 0 picks a free one'),
  ...runnerFlags(),
  ...storeFlags(),
  json: jsonOption('print the summary as JSON'),
});
export type RecordFlags = FlagsOf<ReturnType<typeof recordFlags>>;

/** Where the policy trains and is served: the backend, its cluster, its vLLM. */
const backendFlags = () => ({
  backend: configOption('--backend <backend>', 'train.backend'),
  model: configOption('--model <folder>', 'train.model'),
  serveVllm: configOption('--serve-vllm', 'train.vllm.serve'),
  device: configOption('--device <device>', 'train.vllm.device'),
  gpus: configOption('--gpus <n>', 'train.verl.gpus'),
  nodes: configOption('--nodes <m>', 'train.verl.nodes'),
  rayAddress: configOption('--ray-address <addr>', 'train.verl.rayAddress'),
  tensorParallel: configOption('--tensor-parallel <tp>', 'train.verl.tensorParallel'),
  gpuMemoryUtilization: configOption('--gpu-memory-utilization <f>', 'train.vllm.gpuMemoryUtilization'),
  oldLogprobs: configOption('--old-logprobs <source>', 'train.verl.oldLogprobs'),
  verl: configOption('--verl <key=value>', 'train.verl.overrides'),
  dryRun: flag<boolean>(
    new Option('--dry-run', 'print the resolved settings (verl: the composed verl config) and start nothing'),
  ),
});

/** LoRA: what trains (an adapter, the base frozen) instead of every weight. */
const loraFlags = () => ({
  loraRank: configOption('--lora-rank <r>', 'train.lora.rank'),
  loraAlpha: configOption('--lora-alpha <a>', 'train.lora.alpha'),
  loraDropout: configOption('--lora-dropout <p>', 'train.lora.dropout'),
  loraTargets: configOption('--lora-targets <names>', 'train.lora.targets'),
  loraFrom: configOption('--lora-from <adapter>', 'train.lora.from'),
});

/** On-policy distillation: a teacher scores the student's own tokens. */
const distillFlags = () => ({
  teacher: configOption('--teacher <url|folder>', 'train.distill.teacher'),
  distillCoef: configOption('--distill-coef <λ>', 'train.distill.coef'),
  taskReward: configOption('--task-reward <on|off>', 'train.distill.taskReward'),
});

/** The data, the steps and the algorithm. */
const loopFlags = () => ({
  tasks: configOption('--tasks <file.jsonl>', 'train.tasks'),
  fromDb: configOption('--from-db', 'train.fromDb'),
  n: rolloutsOption('train.rollouts.n'),
  batchSize: configOption('--batch-size <b>', 'train.batch.size'),
  steps: configOption('--steps <s>', 'train.schedule.steps'),
  concurrency: concurrencyOption('train.rollouts.concurrency'),
  lr: configOption('--lr <rate>', 'train.optimiser.lr'),
  advantage: configOption('--advantage <estimator>', 'train.batch.advantage'),
  lossNorm: configOption('--loss-norm <norm>', 'train.batch.lossNorm'),
  klCoef: configOption('--kl-coef <c>', 'train.optimiser.klCoef'),
  maxResponseTokens: configOption('--max-response-tokens <n>', 'train.batch.maxResponseTokens'),
  rewardCmd: configOption('--reward-cmd <cmd>', 'train.rollouts.rewardCmd'),
  ...judgeFlags(),
  valTasks: configOption('--val-tasks <file.jsonl>', 'train.schedule.valTasks'),
  valEvery: configOption('--val-every <n>', 'train.schedule.valEvery'),
  saveEvery: configOption('--save-every <n>', 'train.schedule.saveEvery'),
  seed: configOption('--seed <seed>', 'train.seed'),
  asyncGroups: configOption('--async-groups <g>', 'train.rollouts.asyncGroups'),
  maxStaleness: configOption('--max-staleness <v>', 'train.rollouts.maxStaleness'),
  isCorrection: configOption('--is-correction <kind>', 'train.optimiser.isCorrection'),
  isCap: configOption('--is-cap <c>', 'train.optimiser.isCap'),
  timeout: configOption('--timeout <seconds>', 'train.rollouts.timeoutS'),
  reportTo: configOption('--report-to <tracker>', 'train.schedule.reportTo'),
});

/**
 * `alight train`'s flags, in --help order. Their type is TrainFlags, and the config key each declares is where
 * commands/train.ts puts its value (`--device` in train.vllm.device): no list of names to keep beside them.
 */
export const trainFlags = () => ({
  ...backendFlags(),
  ...loopFlags(),
  ...distillFlags(),
  ...loraFlags(),
  initFrom: flag<string>(
    new Option(
      '--init-from <run>',
      'start from the last checkpoint of this run (alight sft, or train): model or adapter',
    ).conflicts('resume'),
  ),
  run: runOption(),
  resume: flag<string>(new Option('--resume <run>', 'continue this run from its last checkpoint, same data order')),
  port: configOption('--port <port>', 'gateway.port', 'gateway port; 0 picks a free one'),
  ...runnerFlags(),
  ...storeFlags(),
  json: jsonOption('print the result as JSON'),
});
export type TrainFlags = FlagsOf<ReturnType<typeof trainFlags>>;

/** `alight sft`'s flags: those it shares with train are train's own, so that its config resolves as train's does. */
export const sftFlags = () => {
  const { model, gpus, verl } = backendFlags();
  const { lr, seed, reportTo } = loopFlags();
  return {
    data: alwaysSet<string>(
      new Option(
        '--data <path>',
        "samples curate's folder (train.safetensors, val.safetensors) or one file",
      ).makeOptionMandatory(),
    ),
    epochs: alwaysSet<number>(new Option('--epochs <n>', 'passes over the examples').argParser(int).default(2)),
    model,
    backend: configOption(
      '--backend <backend>',
      'train.backend',
      "torch: the PyTorch worker; verl: verl's SFT trainer (FSDP)",
    ),
    gpus,
    verl,
    dryRun: flag<boolean>(
      new Option('--dry-run', "with --backend verl: print verl's composed SFT config and start nothing"),
    ),
    batchSize: configOption('--batch-size <b>', 'train.batch.size', 'examples per step (config train.batch.size)'),
    lr,
    seed,
    // Not train.schedule.saveEvery's flag: sft has a default of its own (see sftCommand).
    saveEvery: flag<number>(
      new Option('--save-every <n>', 'checkpoint every N steps (default: after the last only)').argParser(int),
    ),
    reportTo,
    ...loraFlags(),
    run: runOption(),
    ...storeFlags(),
    json: jsonOption('print the result as JSON'),
  };
};
export type SftFlags = FlagsOf<ReturnType<typeof sftFlags>>;
