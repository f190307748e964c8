import { isRecord } from '../records.js';

// `train:` was one flat list of keys until 2026-12-06; they are grouped now (train-schema.ts). A config file or a
// stored run that spells a key the flat way is read as the grouped key, so that old files and old runs (`--resume`,
// `runs show`) keep working; a file is told where each key went.

/** Each flat key and the grouped path it moved to, under `train`. */
const moves: Record<string, string> = {
  n: 'rollouts.n',
  concurrency: 'rollouts.concurrency',
  timeoutS: 'rollouts.timeoutS',
  rewardCmd: 'rollouts.rewardCmd',
  failedRollouts: 'rollouts.failed',
  asyncGroups: 'rollouts.asyncGroups',
  maxStaleness: 'rollouts.maxStaleness',
  batchSize: 'batch.size',
  level: 'batch.level',
  purposes: 'batch.purposes',
  advantage: 'batch.advantage',
  lossNorm: 'batch.lossNorm',
  missingReward: 'batch.missingReward',
  maxPromptTokens: 'batch.maxPromptTokens',
  maxResponseTokens: 'batch.maxResponseTokens',
  dropZeroVariance: 'batch.dropZeroVariance',
  dropOverlong: 'batch.dropOverlong',
  rowMultiple: 'batch.rowMultiple',
  lr: 'optimiser.lr',
  weightDecay: 'optimiser.weightDecay',
  maxGradNorm: 'optimiser.maxGradNorm',
  clipLow: 'optimiser.clipLow',
  clipHigh: 'optimiser.clipHigh',
  klCoef: 'optimiser.klCoef',
  ppoEpochs: 'optimiser.ppoEpochs',
  microBatchRows: 'optimiser.microBatchRows',
  isCorrection: 'optimiser.isCorrection',
  isCap: 'optimiser.isCap',
  steps: 'schedule.steps',
  saveEvery: 'schedule.saveEvery',
  valTasks: 'schedule.valTasks',
  valEvery: 'schedule.valEvery',
  reportTo: 'schedule.reportTo',
  threads: 'worker.threads',
  workerTimeoutS: 'worker.timeoutS',
  restarts: 'worker.restarts',
  servedTolerance: 'worker.servedTolerance',
  serveVllm: 'vllm.serve',
  vllmDevice: 'vllm.device',
  gpuMemoryUtilization: 'vllm.gpuMemoryUtilization',
  gpus: 'verl.gpus',
  nodes: 'verl.nodes',
  rayAddress: 'verl.rayAddress',
  tensorParallel: 'verl.tensorParallel',
  oldLogprobs: 'verl.oldLogprobs',
  verl: 'verl.overrides',
};

/**
 * `train` with its flat keys moved into their groups, and the moves made (`train.lr → train.optimiser.lr`). A grouped
 * key given too wins over its flat spelling. `verl` moves only as the list of overrides it was; the group is an object.
 */
export function groupedTrain(train: unknown): { train: unknown; moved: string[] } {
  if (!isRecord(train)) return { train, moved: [] };
  // Own keys only: `constructor` or `toString` in a file is an unknown key for the schema to name, not a move.
  const isFlat = (key: string, value: unknown) =>
    Object.hasOwn(moves, key) && value !== undefined && (key !== 'verl' || Array.isArray(value));
  const out: Record<string, unknown> = {};
  const moved: string[] = [];
  for (const [key, value] of Object.entries(train)) if (!isFlat(key, value)) out[key] = value;
  for (const [key, value] of Object.entries(train)) {
    if (!isFlat(key, value)) continue;
    const [group, name] = moves[key]!.split('.') as [string, string];
    out[group] = { [name]: value, ...(isRecord(out[group]) ? out[group] : {}) };
    moved.push(`train.${key} → train.${moves[key]}`);
  }
  return { train: out, moved };
}
