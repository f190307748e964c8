import { resolve } from 'node:path';
import { withOverrides } from '../src/config/load.js';
import type { Config, TrainConfig } from '../src/config/schema.js';
import { AlightError, ExitCode } from '../src/errors.js';
import { readTasks } from '../src/runner/tasks.js';
import { keptAsTasks } from '../src/data/pipeline.js';
import { train, type TrainResult } from '../src/train/loop.js';
import type { TrainListener } from '../src/train/events.js';
import { plainTrainProgress } from '../src/ui/train-progress.js';
import { defaultRunName, newSecret, printJson, withInterrupt, withStore } from './shared.js';

export type TrainFlags = Partial<Pick<TrainConfig, 'backend' | 'model' | 'tasks' | 'fromDb' | 'n' | 'batchSize' | 'steps' | 'concurrency' | 'lr' |
  'advantage' | 'lossNorm' | 'valTasks' | 'valEvery' | 'saveEvery' | 'seed' | 'klCoef' | 'maxResponseTokens' | 'rewardCmd' | 'asyncGroups' |
  'maxStaleness' | 'isCorrection' | 'isCap'>> & {
  run?: string; resume?: string; timeout?: number; port?: number; db?: string; config?: string; json?: boolean;
};

export async function trainCommand(cmd: string, args: string[], flags: TrainFlags): Promise<TrainResult> {
  if (flags.resume && flags.run && flags.resume !== flags.run) throw new AlightError('--resume names the run; drop --run', ExitCode.usage);
  return withStore(flags, async (store, fileConfig) => {
    const { run: _run, resume, timeout, port, db: _db, config: _config, json, ...trainFlags } = flags;
    // A resumed run keeps its own settings (model, tasks, seed: the same data order); flags given now still win.
    const stored = resume ? (JSON.parse(store.getRun(resume)?.config ?? '{}') as { train?: TrainConfig }).train : undefined;
    const base: Config = stored ? { ...fileConfig, train: stored } : fileConfig;
    const given: Config = withOverrides(base, { train: { ...trainFlags, timeoutS: timeout }, gateway: { port } });
    // Stored with the run, paths must not depend on where a later --resume is run from.
    const absolute = (path: string | undefined): string | undefined => (path === undefined ? undefined : resolve(path));
    const config: Config = { ...given, train: { ...given.train, model: absolute(given.train.model), tasks: absolute(given.train.tasks),
      valTasks: absolute(given.train.valTasks) } };
    if (config.train.tasks && config.train.fromDb) throw new AlightError('pass --tasks or --from-db, not both', ExitCode.usage);
    if (!config.train.tasks && !config.train.fromDb) {
      throw new AlightError('no tasks: pass --tasks <file.jsonl>, or --from-db for the tasks alight data kept, or set train.tasks in alight.config.yaml', ExitCode.usage);
    }
    const tasks = config.train.fromDb ? keptAsTasks(store) : readTasks(config.train.tasks!);
    const live = !json && process.stdout.isTTY ? (await import('../src/ui/train-view.js')).liveTrainView() : null;
    const listener: TrainListener = live ?? plainTrainProgress((line) => process.stderr.write(`alight: ${line}\n`));
    let result: TrainResult;
    try {
      result = await withInterrupt((signal) => train({
        store, config, run: resume ?? flags.run ?? defaultRunName('train'), command: cmd, args, resume: Boolean(resume),
        tasks, valTasks: config.train.valTasks ? readTasks(config.train.valTasks) : null,
        adminKey: process.env.ALIGHT_ADMIN_KEY || newSecret(), signal, onEvent: listener,
      }));
    } finally {
      await live?.stop();
    }
    if (json) printJson(result);
    else process.stdout.write(`run ${result.run}: ${result.steps.length} steps; metrics: alight runs show ${result.run}\n`);
    return result;
  });
}
