import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { withOverrides } from '../src/config/load.js';
import { type Config, type TrainConfig, trainsLora } from '../src/config/schema.js';
import { keptAsTasks } from '../src/data/pipeline.js';
import { AlightError, ExitCode } from '../src/errors.js';
import { readTasks, type Task } from '../src/runner/tasks.js';
import { verlPython } from '../src/setup/verl-env.js';
import type { Store } from '../src/store/store.js';
import { backendFor } from '../src/train/backend-choice.js';
import type { TrainListener } from '../src/train/events.js';
import { type TrainResult, train } from '../src/train/loop.js';
import { composedVerlConfig, verlHost, verlPlan } from '../src/train/verl-config.js';
import { plainTrainProgress } from '../src/ui/train-progress.js';
import { renderVerlPlan } from '../src/ui/train-report.js';
import { configValues } from './flags.js';
import {
  defaultRunName,
  newSecret,
  printJson,
  rewardWithFlags,
  withInterrupt,
  withRunner,
  withStore,
} from './shared.js';
import { type TrainFlags, trainFlags } from './table/declared.js';

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
        valTasks: config.train.valTasks ? readTasks(config.train.valTasks) : null,
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
 * The config file under the flags. A resumed run keeps its own settings (model, tasks, seed: the same data order);
 * flags given now still win. Paths are made absolute: stored with the run, they must not depend on where a later
 * --resume is run from.
 */
export function resolvedConfig(store: Store, fileConfig: Config, flags: TrainFlags): Config {
  const stored = flags.resume
    ? (JSON.parse(store.getRun(flags.resume)?.config ?? '{}') as { train?: TrainConfig }).train
    : undefined;
  const base: Config = stored ? { ...fileConfig, train: stored } : fileConfig;
  // Each flag lands on the key its option declares (--device on train.vllmDevice); the runner's, the judge's and the
  // gateway's through the helpers record shares, which refuse what does not apply.
  const { lora, distill, ...train } = (configValues(trainFlags(), flags).train ?? {}) as Partial<TrainConfig>;
  const given: Config = withRunner(
    withOverrides(base, {
      reward: rewardWithFlags(base, flags),
      train: {
        ...train,
        backend: backendFor(flags),
        lora: { ...base.train.lora, ...lora },
        distill: { ...base.train.distill, ...distill },
      },
    }),
    flags,
    { port: flags.port },
  );
  const absolute = (path: string | undefined): string | undefined => (path === undefined ? undefined : resolve(path));
  // A hub id (owner/name, not here as a folder) stays as it is: verl loads it.
  const model =
    given.train.model && !existsSync(given.train.model) && /^[^./~][^/]*\/[^/]+$/.test(given.train.model)
      ? given.train.model
      : absolute(given.train.model);
  return {
    ...given,
    train: {
      ...given.train,
      model,
      tasks: absolute(given.train.tasks),
      valTasks: absolute(given.train.valTasks),
      lora: { ...given.train.lora, from: absolute(given.train.lora.from) },
      distill: { ...given.train.distill, teacher: teacherPath(given.train.distill.teacher) },
    },
  };
}

/** A teacher folder made absolute (stored with the run); a URL as it is. */
const teacherPath = (spec: string | undefined): string | undefined =>
  spec === undefined || /^https?:\/\//.test(spec) ? spec : resolve(spec);

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
    flags.gpuMemoryUtilization !== undefined && !train.serveVllm && '--gpu-memory-utilization',
  ].filter((f): f is string => Boolean(f));
  if (ignored.length)
    throw new AlightError(
      `${ignored.join(', ')}: read by the verl backend only (--gpu-memory-utilization: or with --serve-vllm); ` +
        'this run trains on torch: pass --backend verl, or leave them out',
      ExitCode.usage,
    );
}

/** LoRA settings the chosen backend or engine cannot honour, refused rather than ignored. */
export function refuseLoraUnsupported(train: TrainConfig): void {
  const { lora } = train;
  if (!trainsLora(train)) return;
  const adapterConfig = lora.from ? resolve(lora.from, 'adapter_config.json') : null;
  const refusals: [boolean, string][] = [
    [
      adapterConfig !== null && !existsSync(adapterConfig),
      `--lora-from ${lora.from}: no LoRA adapter there (adapter_config.json)`,
    ],
    [
      (train.serveVllm || train.backend === 'verl') && adaptsOutput(lora.targets, adapterConfig),
      'an adapter on lm_head is served by the torch worker alone: vLLM drops its delta from prompt logprobs ' +
        '(vLLM #51594), so the served policy would not be the trained one; leave lm_head out of --lora-targets',
    ],
    [train.backend === 'verl' && lora.dropout > 0, "verl's LoRA has no dropout setting: leave out --lora-dropout"],
    [
      train.backend === 'verl' && lora.rank === 0,
      "verl needs the adapter's rank to continue it: pass --lora-rank with --lora-from",
    ],
  ];
  const refusal = refusals.find(([applies]) => applies)?.[1];
  if (refusal) throw new AlightError(refusal, ExitCode.usage);
}

/** Whether the adapter trained (a new one's targets, or the continued one's) includes the output layer. */
function adaptsOutput(targets: string, adapterConfig: string | null): boolean {
  if (adapterConfig === null) return targets.split(',').some((t) => t.trim() === 'lm_head');
  if (!existsSync(adapterConfig)) return false; // refused for that already
  const saved = JSON.parse(readFileSync(adapterConfig, 'utf8')) as { target_modules?: string[] | string };
  return [saved.target_modules ?? []].flat().includes('lm_head');
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
