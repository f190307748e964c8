import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { withOverrides } from '../src/config/load.js';
import type { Config, TrainConfig } from '../src/config/schema.js';
import { keptAsTasks } from '../src/data/pipeline.js';
import { AlightError, ExitCode } from '../src/errors.js';
import { readTasks } from '../src/runner/tasks.js';
import { PYTHON_DIR } from '../src/setup/python-env.js';
import { gpuMemoryGb, verlPython } from '../src/setup/verl-env.js';
import { backendFor } from '../src/train/backend-choice.js';
import type { TrainListener } from '../src/train/events.js';
import { type TrainResult, train } from '../src/train/loop.js';
import { verlPlan } from '../src/train/verl-config.js';
import { plainTrainProgress } from '../src/ui/train-progress.js';
import { defaultRunName, newSecret, printJson, withInterrupt, withStore } from './shared.js';

export type TrainFlags = Partial<
  Pick<
    TrainConfig,
    | 'backend'
    | 'model'
    | 'tasks'
    | 'fromDb'
    | 'n'
    | 'batchSize'
    | 'steps'
    | 'concurrency'
    | 'lr'
    | 'advantage'
    | 'lossNorm'
    | 'valTasks'
    | 'valEvery'
    | 'saveEvery'
    | 'seed'
    | 'klCoef'
    | 'maxResponseTokens'
    | 'rewardCmd'
    | 'asyncGroups'
    | 'maxStaleness'
    | 'isCorrection'
    | 'isCap'
    | 'gpus'
    | 'nodes'
    | 'rayAddress'
    | 'tensorParallel'
    | 'gpuMemoryUtilization'
    | 'oldLogprobs'
    | 'verl'
    | 'serveVllm'
  >
> & {
  device?: TrainConfig['vllmDevice'];
  run?: string;
  resume?: string;
  timeout?: number;
  port?: number;
  db?: string;
  config?: string;
  json?: boolean;
  dryRun?: boolean;
};

export async function trainCommand(cmd: string, args: string[], flags: TrainFlags): Promise<TrainResult | DryRun> {
  if (flags.resume && flags.run && flags.resume !== flags.run)
    throw new AlightError('--resume names the run; drop --run', ExitCode.usage);
  return withStore(flags, async (store, fileConfig) => {
    const { run: _run, resume, timeout, port, db: _db, config: _config, json, dryRun, device, ...trainFlags } = flags;
    // A resumed run keeps its own settings (model, tasks, seed: the same data order); flags given now still win.
    const stored = resume
      ? (JSON.parse(store.getRun(resume)?.config ?? '{}') as { train?: TrainConfig }).train
      : undefined;
    const base: Config = stored ? { ...fileConfig, train: stored } : fileConfig;
    const given: Config = withOverrides(base, {
      train: { ...trainFlags, backend: backendFor(trainFlags), vllmDevice: device, timeoutS: timeout },
      gateway: { port },
    });
    // Stored with the run, paths must not depend on where a later --resume is run from.
    const absolute = (path: string | undefined): string | undefined => (path === undefined ? undefined : resolve(path));
    // A hub id (owner/name, not here as a folder) stays as it is: verl loads it.
    const model =
      given.train.model && !existsSync(given.train.model) && /^[^./~][^/]*\/[^/]+$/.test(given.train.model)
        ? given.train.model
        : absolute(given.train.model);
    const config: Config = {
      ...given,
      train: { ...given.train, model, tasks: absolute(given.train.tasks), valTasks: absolute(given.train.valTasks) },
    };
    if (dryRun) return dryRunOf(config.train, Boolean(json));
    if (config.train.tasks && config.train.fromDb)
      throw new AlightError('pass --tasks or --from-db, not both', ExitCode.usage);
    if (!config.train.tasks && !config.train.fromDb) {
      throw new AlightError(
        'no tasks: pass --tasks <file.jsonl>, or --from-db for the ' +
          'tasks alight data kept, or set train.tasks in alight.config.yaml',
        ExitCode.usage,
      );
    }
    const tasks = config.train.fromDb ? keptAsTasks(store) : readTasks(config.train.tasks!);
    const live = !json && process.stdout.isTTY ? (await import('../src/ui/train-view.js')).liveTrainView() : null;
    const listener: TrainListener = live ?? plainTrainProgress((line) => process.stderr.write(`alight: ${line}\n`));
    let result: TrainResult;
    try {
      result = await withInterrupt((signal) =>
        train({
          store,
          config,
          run: resume ?? flags.run ?? defaultRunName('train'),
          command: cmd,
          args,
          resume: Boolean(resume),
          tasks,
          valTasks: config.train.valTasks ? readTasks(config.train.valTasks) : null,
          adminKey: process.env.ALIGHT_ADMIN_KEY || newSecret(),
          signal,
          onEvent: listener,
        }),
      );
    } finally {
      await live?.stop();
    }
    if (json) printJson(result);
    else
      process.stdout.write(
        `run ${result.run}: ${result.steps.length} steps; metrics: alight runs show ${result.run}\n`,
      );
    return result;
  });
}

interface DryRun {
  train: TrainConfig;
  verl: {
    preset: string;
    worldSize: number;
    tensorParallel: number;
    overrides: string[];
    composed: string | null;
  } | null;
}

/**
 * `--dry-run`: the resolved train settings and, for verl, the overrides alight maps them onto and the composed verl
 * config (verl's own Hydra compose, in the verl virtualenv when it exists; a key verl does not have fails there).
 */
function dryRunOf(train: TrainConfig, json: boolean): DryRun {
  const plan = train.backend === 'verl' ? verlPlan(train, gpuMemoryGb()) : null;
  const python = plan && verlPython();
  let composed: string | null = null;
  if (plan && python) {
    const res = spawnSync(python, ['-m', 'alight_worker.verl_config', ...plan.overrides], {
      cwd: PYTHON_DIR,
      encoding: 'utf8',
      maxBuffer: 64 << 20,
    });
    if (res.status !== 0)
      throw new AlightError(
        `verl refused the config:\n${res.stderr.trim().split('\n').slice(-6).join('\n')}`,
        ExitCode.usage,
      );
    composed = res.stdout;
  }
  const result: DryRun = { train, verl: plan && { ...plan, composed } };
  if (json) printJson(result);
  else if (!plan) process.stdout.write(`${JSON.stringify(train, null, 2)}\n`);
  else {
    process.stdout.write(
      `# preset ${plan.preset}: ${plan.worldSize} GPU(s), vLLM ` +
        `tensor parallel ${plan.tensorParallel}\n# verl overrides:\n` +
        `${plan.overrides.map((o) => `#   ${o}`).join('\n')}\n` +
        (composed ?? '# (the composed config needs the verl virtualenv: alight doctor --setup --backend verl)\n'),
    );
  }
  return result;
}
