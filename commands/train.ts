import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../src/config/schema.js';
import type { TrainConfig } from '../src/config/train-schema.js';
import { keptAsTasks } from '../src/data/pipeline.js';
import { AlightError, ExitCode } from '../src/errors.js';
import { readTasks, type Task } from '../src/runner/tasks.js';
import { verlPython } from '../src/setup/verl-env.js';
import type { Store } from '../src/store/store.js';
import type { TrainListener } from '../src/train/events.js';
import { type TrainResult, train } from '../src/train/loop.js';
import { refuseLoraUnsupported } from '../src/train/rules.js';
import { composedVerlConfig, verlHost, verlPlan } from '../src/train/verl-config.js';
import { plainTrainProgress } from '../src/ui/train-progress.js';
import { renderVerlPlan } from '../src/ui/train-report.js';
import { defaultRunName, newSecret, printJson, resolvedConfig, withInterrupt, withStore } from './shared.js';
import type { TrainFlags } from './table/declared.js';

export async function trainCommand(cmd: string, args: string[], flags: TrainFlags): Promise<TrainResult | DryRun> {
  if (flags.resume && flags.run && flags.resume !== flags.run)
    throw new AlightError('--resume names the run; drop --run', ExitCode.usage);
  return withStore(flags, async (store, fileConfig) => {
    const config = initialPolicy(store, resolvedConfig(store, fileConfig, flags), flags);
    refuseTorchIgnored(config.train, flags);
    refuseLoraUnsupported(config.train);
    if (flags.dryRun) return dryRunOf(config.train, Boolean(flags.json));
    const tasks = trainingTasks(store, config.train);
    const result = await trainWithView(flags, (onEvent, signal) =>
      train({
        store,
        config,
        run: flags.resume ?? flags.run ?? defaultRunName('train'),
        command: cmd,
        args,
        resume: Boolean(flags.resume),
        tasks,
        valTasks: config.train.schedule.valTasks ? readTasks(config.train.schedule.valTasks) : null,
        adminKey: process.env.ALIGHT_ADMIN_KEY || newSecret(),
        signal,
        onEvent,
      }),
    );
    if (flags.json) printJson(result);
    else
      process.stdout.write(
        `run ${result.run}: ${result.steps.length} steps; metrics: alight runs show ${result.run}\n`,
      );
    return result;
  });
}

/**
 * `--init-from <run>`: RL starts from that run's last checkpoint (an `alight sft` run's, or another train run's): its
 * full weights as the model, or its adapter continued on the adapter's base.
 */
function initialPolicy(store: Store, config: Config, flags: TrainFlags): Config {
  if (!flags.initFrom) return config;
  if (!store.getRun(flags.initFrom))
    throw new AlightError(`--init-from: no run ${flags.initFrom} in ${store.path} (alight runs list)`, ExitCode.input);
  const checkpoint = store
    .trainSteps(flags.initFrom)
    .map((s) => s.checkpoint)
    .filter((c): c is string => c !== null)
    .at(-1);
  if (!checkpoint || !existsSync(checkpoint))
    throw new AlightError(`--init-from: run ${flags.initFrom} has no checkpoint on disk`, ExitCode.input);
  const adapterConfig = join(checkpoint, 'adapter_config.json');
  if (!existsSync(adapterConfig)) {
    if (flags.model || flags.loraFrom)
      throw new AlightError('--init-from gives the model (full weights): drop --model and --lora-from', ExitCode.usage);
    return { ...config, train: { ...config.train, model: checkpoint } };
  }
  if (flags.loraFrom) throw new AlightError('--init-from gives the adapter: drop --lora-from', ExitCode.usage);
  const base = (JSON.parse(readFileSync(adapterConfig, 'utf8')) as { base_model_name_or_path?: string })
    .base_model_name_or_path;
  const model = flags.model ? config.train.model : base;
  if (!model) throw new AlightError(`${adapterConfig} names no base model: pass --model`, ExitCode.usage);
  return { ...config, train: { ...config.train, model, lora: { ...config.train.lora, from: checkpoint } } };
}

/** Flags only verl reads (or, for vLLM's memory share, verl and --serve-vllm), refused on torch rather than ignored. */
function refuseTorchIgnored(train: TrainConfig, flags: TrainFlags): void {
  if (train.backend === 'verl') return;
  const ignored = [
    flags.verl?.length && '--verl',
    flags.oldLogprobs && '--old-logprobs',
    flags.gpuMemoryUtilization !== undefined && !train.vllm.serve && '--gpu-memory-utilization',
  ].filter((f): f is string => Boolean(f));
  if (ignored.length)
    throw new AlightError(
      `${ignored.join(', ')}: read by the verl backend only (--gpu-memory-utilization: or with --serve-vllm); ` +
        'this run trains on torch: pass --backend verl, or leave them out',
      ExitCode.usage,
    );
}

/** The tasks to train on: a file, or the ones `alight data` kept; exactly one of the two. */
function trainingTasks(store: Store, train: TrainConfig): Task[] {
  if (train.tasks && train.fromDb) throw new AlightError('pass --tasks or --from-db, not both', ExitCode.usage);
  if (!train.tasks && !train.fromDb) {
    throw new AlightError(
      'no tasks: pass --tasks <file.jsonl>, or --from-db for the ' +
        'tasks alight data kept, or set train.tasks in alight.config.yaml',
      ExitCode.usage,
    );
  }
  return train.fromDb ? keptAsTasks(store) : readTasks(train.tasks!);
}

/** Runs `work` with the live view on a terminal (plain progress lines otherwise, or with --json), Ctrl-C aborting it. */
async function trainWithView(
  flags: TrainFlags,
  work: (onEvent: TrainListener, signal: AbortSignal) => Promise<TrainResult>,
): Promise<TrainResult> {
  const live = !flags.json && process.stdout.isTTY ? (await import('../src/ui/train-view.js')).liveTrainView() : null;
  const listener: TrainListener = live ?? plainTrainProgress((line) => process.stderr.write(`alight: ${line}\n`));
  try {
    return await withInterrupt((signal) => work(listener, signal));
  } finally {
    await live?.stop();
  }
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
  const python = train.backend === 'verl' ? verlPython() : null;
  const plan = train.backend === 'verl' ? verlPlan(train, verlHost(train, python)) : null;
  let composed: string | null = null;
  if (plan && python) composed = composedVerlConfig(python, 'ppo_trainer', plan.overrides);
  const result: DryRun = { train, verl: plan && { ...plan, composed } };
  if (json) printJson(result);
  else if (!plan) process.stdout.write(`${JSON.stringify(train, null, 2)}\n`);
  else process.stdout.write(renderVerlPlan(plan, composed));
  return result;
}
