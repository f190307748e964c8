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
import { int, jsonOption, num, onlyWith, storeOptions } from '../options.js';
import { define, group } from './define.js';

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
  defineReports(data);
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
