import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { loadConfig, resolveDb, withOverrides } from '../src/config/load.js';
import type { JudgeConfig } from '../src/config/reward.js';
import { storedTrain } from '../src/config/run-settings.js';
import type { Config, K8sConfig } from '../src/config/schema.js';
import { AlightError, ExitCode } from '../src/errors.js';
import type { GraderOptions, GradingAt } from '../src/eval/grade/grade-types.js';
import { chooseGrader, type GraderName } from '../src/eval/graders/index.js';
import { type ManagedServe, startManagedServe } from '../src/serve/managed.js';
import { startVllm } from '../src/serve/vllm.js';
import { startWorkerServe } from '../src/serve/worker-serve.js';
import { Store } from '../src/store/store.js';
import { backendFor } from '../src/train/backend-choice.js';
import { setupProgress } from '../src/ui/setup-progress.js';
import { configValues, type FlagsOf } from './flags.js';
import { type engineFlags, judgeFlags, runnerFlags, type storeFlags } from './options.js';
import { type TrainFlags, trainFlags } from './table/declared.js';
import type { graderFlags, gradingFlags, reposOption, runtimeOption } from './table/declared-eval.js';

/** `--db` and `--config`: every command that opens the store declares them. */
export type StoreFlags = FlagsOf<ReturnType<typeof storeFlags>>;

/** Opens the store the flags, ALIGHT_DB or the config file point to, runs `work`, and closes it. */
export async function withStore<T>(
  opts: StoreFlags,
  work: (store: Store, config: Config) => Promise<T> | T,
): Promise<T> {
  const { config, path: file, moved } = loadConfig(opts.config);
  if (moved.length) notice(`${file} spells train keys the old, flat way; read as ${moved.join(', ')}: move them there`);
  const path = resolveDb(opts.db, config);
  const store = Store.open(path);
  try {
    return await work(store, config);
  } catch (err) {
    if ((err as { code?: string }).code !== 'SQLITE_BUSY') throw err;
    throw new AlightError(
      `${path} is being written by another process (an \`alight ` +
        `data import\` holds the store's write lock for its whole run, ` +
        'so that an import is all or nothing): run this again when it has finished',
      ExitCode.input,
    );
  } finally {
    store.close();
  }
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function newSecret(): string {
  return randomBytes(24).toString('base64url');
}

/** A run's default name: `<prefix>-<UTC time>-<4 random characters>`, so two runs started in one second differ. */
export function defaultRunName(prefix: string, now = new Date()): string {
  return (
    `${prefix}-${now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15)}` +
    `-${newSecret().slice(0, 4).toLowerCase()}`
  );
}

/**
 * Ctrl-C and SIGTERM abort `work`'s signal. The handlers stay installed until it returns: a second Ctrl-C must not
 * kill alight while it stops harnesses (a few seconds at most).
 */
export async function withInterrupt<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const abort = new AbortController();
  const onSignal = (): void => abort.abort();
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    return await work(abort.signal);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/** Where a run's engine comes from: a URL (config, --upstream), or one alight starts for the run. */
export type ServeFlags = FlagsOf<ReturnType<typeof engineFlags>>;

/**
 * The upstream a run records against: with `serve`, `alight serve` started on that GGUF model for the duration of
 * `work`; with `serveWorker`, the torch worker on that model folder; with `serveVllm`, vLLM's server on that model (GPU, or vLLM's CPU build), behind a fresh API key only the
 * gateway holds; else the config's URL. Checks the API key variable the config names, and hands the key to `work`
 * (never stored).
 */
export async function withUpstream<T>(
  config: Config,
  flags: ServeFlags,
  work: (config: Config, upstreamApiKey: string | undefined) => Promise<T>,
): Promise<T> {
  const served: (ManagedServe & { apiKey?: string }) | null = flags.serve
    ? await startManagedServe(flags.serve)
    : flags.serveWorker
      ? await startWorkerServe(flags.serveWorker, {
          logFile: join(dirname(config.db), 'worker-serve.log'),
          setup: setupProgress(),
        })
      : // Ctrl-C while vLLM loads stops it too (it runs in a process group of its own, holding GPUs and a port).
        flags.serveVllm
        ? await withInterrupt((signal) =>
            startVllm({
              model: flags.serveVllm!,
              device: flags.device,
              logFile: join(dirname(config.db), 'vllm.log'),
              signal,
            }),
          )
        : null;
  try {
    const c = served
      ? withOverrides(config, {
          upstream: { url: served.url, kind: 'vllm', model: served.model, apiKeyEnv: undefined },
        })
      : config;
    if (!c.upstream.url)
      throw new AlightError(
        'no upstream: pass --upstream http://HOST:PORT/v1 (or ' +
          '--serve MODEL), or set upstream.url in alight.config.yaml',
        ExitCode.usage,
      );
    if (served) return await work(c, served.apiKey);
    const apiKeyEnv = c.upstream.apiKeyEnv;
    if (apiKeyEnv && !process.env[apiKeyEnv])
      throw new AlightError(`upstream.apiKeyEnv names ${apiKeyEnv}, which is not set`, ExitCode.usage);
    return await work(c, apiKeyEnv ? process.env[apiKeyEnv] : undefined);
  } finally {
    await served?.stop();
  }
}

/** The `--runner` flags. */
export type RunnerFlags = FlagsOf<ReturnType<typeof runnerFlags>>;

/**
 * The config with the runner flags applied (`gateway` adds the command's own gateway flags). A Kubernetes flag with the
 * local runner is refused, not ignored; so is the Kubernetes runner without an image (unless `imagePerTask`: eval's
 * instance images).
 */
export function withRunner(
  config: Config,
  flags: RunnerFlags,
  gateway: Partial<Config['gateway']> = {},
  imagePerTask = false,
): Config {
  const given = configValues(runnerFlags(), flags) as Partial<Config>;
  const merged = withOverrides(config, { ...given, gateway: { ...gateway, ...given.gateway } });
  // Every runner flag but --runner itself says what a Job is made of.
  const k8sOnly = Object.keys(runnerFlags()).filter(
    (f) => f !== 'runner' && (flags as Record<string, unknown>)[f] !== undefined,
  );
  if (merged.runner !== 'k8s' && k8sOnly.length > 0) {
    const flag = flagOf(k8sOnly[0]);
    throw new AlightError(`${flag} applies only with --runner k8s (or runner: k8s in the config)`, ExitCode.usage);
  }
  if (merged.runner === 'k8s' && !imagePerTask && !merged.k8s.image && !merged.k8s.template)
    throw new AlightError(
      'the Kubernetes runner needs an image: pass --image (or k8s.image) or --job-template',
      ExitCode.usage,
    );
  return merged;
}

/** The judge flags. */
export type JudgeFlags = FlagsOf<ReturnType<typeof judgeFlags>>;

/** reward with the judge flags over the config file's reward.judge (a flag given wins, the file's other keys stay). */
export function rewardWithFlags(config: Config, f: JudgeFlags): Config['reward'] {
  const given = configValues(judgeFlags(), f).reward?.judge as Partial<JudgeConfig> | undefined;
  if (!given) return config.reward;
  // Validated with the rest of the config by withOverrides (a --judge-model without a URL is refused there).
  return { ...config.reward, judge: { ...config.reward.judge, ...given } as JudgeConfig };
}

/** The command-line flag of an option's attribute name (`kubeContext` → `--kube-context`). */
export const flagOf = (attribute: string): string => `--${attribute.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

/**
 * The config file under the flags. A resumed run keeps its own settings (model, tasks, seed: the same data order);
 * flags given now still win. Paths are made absolute: stored with the run, they must not depend on where a later
 * --resume is run from.
 */
export function resolvedConfig(store: Store, fileConfig: Config, flags: TrainFlags): Config {
  const stored = flags.resume ? storedTrain(store, flags.resume) : undefined;
  const base: Config = stored ? { ...fileConfig, train: stored } : fileConfig;
  // Each flag lands on the key its option declares (--device on train.vllm.device); the runner's, the judge's and the
  // gateway's through the helpers record shares, which refuse what does not apply.
  const given: Config = withRunner(
    withOverrides(base, {
      reward: rewardWithFlags(base, flags),
      train: { ...configValues(trainFlags(), flags).train, backend: backendFor(flags) },
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
      schedule: { ...given.train.schedule, valTasks: absolute(given.train.schedule.valTasks) },
      lora: { ...given.train.lora, from: absolute(given.train.lora.from) },
      distill: { ...given.train.distill, teacher: teacherPath(given.train.distill.teacher) },
    },
  };
}

/** A teacher folder made absolute (stored with the run); a URL as it is. */
const teacherPath = (spec: string | undefined): string | undefined =>
  spec === undefined || /^https?:\/\//.test(spec) ? spec : resolve(spec);

/**
 * What picks the grader: the grader flags, --repos, --no-sandbox and eval swebench's --runtime; each command that
 * grades (eval swebench, eval grade, data validate) declares some of them.
 */
export type GraderFlags = Partial<
  FlagsOf<
    ReturnType<typeof graderFlags> &
      Pick<ReturnType<typeof gradingFlags>, 'sandbox'> & {
        repos: ReturnType<typeof reposOption>;
        runtime: ReturnType<typeof runtimeOption>;
      }
  >
>;

/** The grader the flags name (checked before anything runs), and the options it opens with. */
export function graderOf(flags: GraderFlags): { name: GraderName; options: GraderOptions } {
  const reposDir = flags.repos ? resolve(flags.repos) : undefined;
  const options = { reposDir, image: flags.image, sandboxed: flags.sandbox !== false };
  return { name: chooseGrader(flags.grader, options, notice, flags.runtime), options };
}

/** Where a command grades (the cluster for k8s, the tests' timeout), its notices and set-up shown on stderr. */
export const gradingAt = (k8s: K8sConfig, timeoutS: number): GradingAt => ({
  k8s,
  timeoutS,
  notice,
  setup: setupProgress(),
});

/** A line for the user on stderr, as alight's notices are written. */
export const notice = (line: string): void => {
  process.stderr.write(`alight: ${line}\n`);
};
