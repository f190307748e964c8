import { type Command, Option } from 'commander';
import { exportFormats, formats } from '../../src/data/task.js';
import type {
  cleanCommand,
  decontaminateCommand,
  dedupeCommand,
  explainCommand,
  exportCommand,
  importCommand,
  statsCommand,
} from '../data.js';
import type { SelectFlags, ValidateFlags } from '../data-measure.js';
import type { SwebenchFlags } from '../eval.js';
import { onlyWith } from '../flags.js';
import { alias, graderOptions, gradingOptions, int, jsonOption, num, storeOptions } from '../options.js';
import { define, group } from './define.js';
import { attemptOptions, harnessArgs } from './eval.js';

type Flags<F extends (...args: never[]) => unknown> = Parameters<F>[0];
const intOption = (flags: string, description: string, value?: number): Option =>
  new Option(flags, description).argParser(int).default(value);

export function registerData(program: Command): void {
  const data = group(program, 'data', 'SWE-bench-style tasks: import, clean, dedupe, decontaminate, export');
  define(data, {
    name: 'import',
    description:
      'validate rows of JSONL, JSON or Parquet exports and store them ' +
      '(again: no change); invalid rows kept aside with the reason',
    args: [['<files...>', 'data files (.jsonl, .json, .parquet)']],
    options: [
      new Option('--source <name>', 'label for these rows (default: the file name)'),
      new Option('--format <format>', 'the export they come from').choices(['auto', ...formats]).default('auto'),
      ...storeOptions(),
      jsonOption('JSON summary'),
    ],
    examples: [
      'alight data import swe-smith.parquet swe-gym.jsonl',
      'alight data import verified.json --source verified --format swe-bench',
    ],
    action: async (files: string[], opts: Parameters<typeof importCommand>[1]) =>
      (await import('../data.js')).importCommand(files, opts),
  });
  define(data, {
    name: 'clean',
    description: "drop tasks that break the preset's rules, each with its reason (replaces the last clean)",
    options: [
      new Option('--preset <preset>', "default: the research notes' structural rules; strict adds R2E-Gym size limits")
        .choices(['default', 'strict', 'none'])
        .default('default'),
      intOption('--min-statement-chars <n>', 'shorter problem statements are dropped', 10),
      intOption('--min-files <n>', 'patches changing fewer files are dropped', 1),
      intOption('--max-files <n>', 'patches changing more files are dropped', 15),
      intOption('--max-tests <n>', 'tasks listing more FAIL_TO_PASS + PASS_TO_PASS tests are dropped', 200),
      new Option('--require-env', 'drop tasks without an image, install_config or eval_script'),
      ...storeOptions(),
      jsonOption('JSON summary'),
    ],
    examples: ['alight data clean', 'alight data clean --preset strict --require-env'],
    action: async (opts: Flags<typeof cleanCommand>) => (await import('../data.js')).cleanCommand(opts),
  });
  defineDedupe(data);
  defineDecontaminate(data);
  defineValidate(data);
  defineSelection(data);
  defineReports(data);
}

/** A probe of the policy on the kept tasks, and the training set chosen from it. */
function defineSelection(data: Command): void {
  define(data, {
    name: 'probe',
    description:
      'the harness k times on each task kept so far (eval swebench over them: recorded, graded); ' +
      "each task's pass count stored with the run",
    args: harnessArgs,
    passThrough: true,
    options: [...attemptOptions(4, 'probe'), jsonOption('JSON summary')],
    examples: ['alight data probe -k 4 --repos repos/ --upstream http://127.0.0.1:8000/v1 -- python agent.py'],
    action: async (cmd: string, args: string[], opts: SwebenchFlags) =>
      (await import('../data-measure.js')).probeCommand(cmd, args, opts),
  });
  define(data, {
    name: 'select',
    description:
      'the training set from a probe: tasks solved at a rate in --solve-rate, plus --add-unsolved never-solved ' +
      'ones, less --val held out (seeded)',
    options: [
      new Option('--probe <run>', 'the probe run to select by (default: the latest)'),
      new Option('--solve-rate <range>', 'the solve rates kept').default('0<r<1'),
      intOption('--add-unsolved <n>', 'never-solved tasks added (a seeded sample)', 0),
      intOption('--val <n>', 'of the selected, held out for validation (data export --held-out)', 0),
      intOption('--seed <seed>', 'seed of the samples', 0),
      ...storeOptions(),
      jsonOption('JSON summary'),
    ],
    examples: ['alight data select --add-unsolved 1000 --val 400', "alight data select --solve-rate '0.25<=r<=0.75'"],
    action: async (opts: SelectFlags) => (await import('../data-measure.js')).selectCommand(opts),
  });
}

function defineValidate(data: Command): void {
  const workers = new Option('--workers <n>', 'tasks validated at once').argParser(int).default(1);
  define(data, {
    name: 'validate',
    description:
      "check each kept task's environment: its gold patch must resolve it, and at the base F2P must fail and " +
      'P2P pass (stored per task; invalid ones dropped as invalid-env)',
    options: [
      new Option('--repos <dir>', 'local clones (owner__name/) or bundles to grade in (else the instance images)'),
      ...graderOptions().filter((opt) => opt.long !== '--image'),
      ...gradingOptions().filter((opt) => opt.long === '--no-sandbox'),
      workers,
      alias('--concurrency <n>', workers),
      new Option('--timeout <seconds>', 'longest test run per grade').argParser(num).default(1800),
      new Option('--force', 'validate again the tasks validated before'),
      ...storeOptions(),
      jsonOption('JSON summary'),
    ],
    examples: [
      'alight data validate --repos repos/ --workers 2',
      'alight data validate --grader podman --workers 4',
      'alight data validate --grader k8s --workers 16',
    ],
    action: async (opts: ValidateFlags) => (await import('../data-measure.js')).validateCommand(opts),
  });
}

function defineDedupe(data: Command): void {
  define(data, {
    name: 'dedupe',
    description:
      'exact duplicates (id, patch, repo+commit+patch, statement) ' +
      'and MinHash-LSH near duplicates; the earliest is kept',
    options: [
      // The near-duplicate settings mean nothing with --no-near.
      new Option('--threshold <j>', 'verified Jaccard for near duplicates')
        .argParser(num)
        .default(0.8)
        .conflicts('near'),
      intOption('--perms <n>', 'MinHash permutations', 128).conflicts('near'),
      intOption('--shingle <n>', 'words per shingle', 5).conflicts('near'),
      new Option('--no-near', 'exact duplicates only'),
      ...storeOptions(),
      jsonOption('JSON summary'),
    ],
    examples: ['alight data dedupe', 'alight data dedupe --threshold 0.7'],
    action: async (opts: Flags<typeof dedupeCommand>) => (await import('../data.js')).dedupeCommand(opts),
  });
}

function defineDecontaminate(data: Command): void {
  define(data, {
    name: 'decontaminate',
    description:
      'drop tasks overlapping a benchmark (ids, repo+commit, patches, repositories); flag shared statement n-grams',
    options: [
      new Option(
        '--against <files...>',
        'reference exports (e.g. SWE-bench Verified) besides the built-in Verified list',
      ),
      new Option('--no-builtin', 'do not use the built-in SWE-bench Verified ids and repositories'),
      new Option('--keep-repos', "do not drop tasks from the reference's repositories"),
      intOption('--ngram <n>', 'flag statements sharing a run of this many words with a reference statement', 13),
      ...storeOptions(),
      jsonOption('JSON summary'),
    ],
    examples: ['alight data decontaminate', 'alight data decontaminate --against verified.parquet --keep-repos'],
    action: async (opts: Flags<typeof decontaminateCommand>) => (await import('../data.js')).decontaminateCommand(opts),
  });
}

/** What the store holds: stats, one task explained, the kept tasks exported. */
function defineReports(data: Command): void {
  define(data, {
    name: 'stats',
    description:
      'counts per source, repo and rule; distributions of patch size, tests and statement length; invalid rows',
    options: [...storeOptions(), jsonOption()],
    action: async (opts: Flags<typeof statsCommand>) => (await import('../data.js')).statsCommand(opts),
  });
  define(data, {
    name: 'explain',
    description: 'why a task was kept or dropped, and its duplicate group',
    args: [['<instance_id>', 'the task']],
    options: [...storeOptions(), jsonOption()],
    action: async (id: string, opts: Parameters<typeof explainCommand>[1]) =>
      (await import('../data.js')).explainCommand(id, opts),
  });
  define(data, {
    name: 'export',
    description: "the kept tasks in SWE-bench's columns (FAIL_TO_PASS as JSON strings), optionally split",
    options: [
      new Option('--out <file>', 'output file (with --split, one per part: out.train.jsonl, …)').makeOptionMandatory(),
      new Option('--format <format>', 'file format').choices(exportFormats).default('jsonl'),
      new Option('--split <spec>', 'e.g. train=0.95,val=0.05'),
      onlyWith(intOption('--seed <seed>', 'shuffle seed for --split', 0), 'split'),
      new Option('--held-out', 'the tasks data select held out for validation, instead of the kept ones'),
      ...storeOptions(),
      jsonOption('JSON summary'),
    ],
    examples: [
      'alight data export --out tasks.jsonl --split train=0.95,val=0.05 --seed 1',
      'alight data export --format parquet --out tasks.parquet',
    ],
    action: async (opts: Flags<typeof exportCommand>) => (await import('../data.js')).exportCommand(opts),
  });
}
