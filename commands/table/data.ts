import type { Command } from 'commander';
import {
  type CleanFlags,
  cleanFlags,
  type DecontaminateFlags,
  type DedupeFlags,
  decontaminateFlags,
  dedupeFlags,
  type ExportFlags,
  exportFlags,
  type ImportFlags,
  importFlags,
  type ProbeFlags,
  probeFlags,
  type ReportFlags,
  reportFlags,
  type SelectFlags,
  selectFlags,
  type ValidateFlags,
  validateFlags,
} from './declared-data.js';
import { define, group } from './define.js';
import { harnessArgs } from './eval.js';

export function registerData(program: Command): void {
  const data = group(program, 'data', 'SWE-bench-style tasks: import, clean, dedupe, decontaminate, export');
  define(data, {
    name: 'import',
    description:
      'validate rows of JSONL, JSON or Parquet exports and store them ' +
      '(again: no change); invalid rows kept aside with the reason',
    args: [['<files...>', 'data files (.jsonl, .json, .parquet)']],
    options: importFlags(),
    examples: [
      'alight data import swe-smith.parquet swe-gym.jsonl',
      'alight data import verified.json --source verified --format swe-bench',
    ],
    action: async (files: string[], opts: ImportFlags) => (await import('../data.js')).importCommand(files, opts),
  });
  define(data, {
    name: 'clean',
    description: "drop tasks that break the preset's rules, each with its reason (replaces the last clean)",
    options: cleanFlags(),
    examples: ['alight data clean', 'alight data clean --preset strict --require-env'],
    action: async (opts: CleanFlags) => (await import('../data.js')).cleanCommand(opts),
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
    options: probeFlags(),
    examples: ['alight data probe -k 4 --repos repos/ --upstream http://127.0.0.1:8000/v1 -- python agent.py'],
    action: async (cmd: string, args: string[], opts: ProbeFlags) =>
      (await import('../eval.js')).probeCommand(cmd, args, opts),
  });
  define(data, {
    name: 'select',
    description:
      'the training set from a probe: tasks solved at a rate in --solve-rate, plus --add-unsolved never-solved ' +
      'ones, less --val held out (seeded)',
    options: selectFlags(),
    examples: ['alight data select --add-unsolved 1000 --val 400', "alight data select --solve-rate '0.25<=r<=0.75'"],
    action: async (opts: SelectFlags) => (await import('../data-measure.js')).selectCommand(opts),
  });
}

function defineValidate(data: Command): void {
  define(data, {
    name: 'validate',
    description:
      "check each kept task's environment: its gold patch must resolve it, and at the base F2P must fail and " +
      'P2P pass (stored per task; invalid ones dropped as invalid-env)',
    options: validateFlags(),
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
    options: dedupeFlags(),
    examples: ['alight data dedupe', 'alight data dedupe --threshold 0.7'],
    action: async (opts: DedupeFlags) => (await import('../data.js')).dedupeCommand(opts),
  });
}

function defineDecontaminate(data: Command): void {
  define(data, {
    name: 'decontaminate',
    description:
      'drop tasks overlapping a benchmark (ids, repo+commit, patches, repositories); flag shared statement n-grams',
    options: decontaminateFlags(),
    examples: ['alight data decontaminate', 'alight data decontaminate --against verified.parquet --keep-repos'],
    action: async (opts: DecontaminateFlags) => (await import('../data.js')).decontaminateCommand(opts),
  });
}

/** What the store holds: stats, one task explained, the kept tasks exported. */
function defineReports(data: Command): void {
  define(data, {
    name: 'stats',
    description:
      'counts per source, repo and rule; distributions of patch size, tests and statement length; invalid rows',
    options: reportFlags(),
    action: async (opts: ReportFlags) => (await import('../data.js')).statsCommand(opts),
  });
  define(data, {
    name: 'explain',
    description: 'why a task was kept or dropped, and its duplicate group',
    args: [['<instance_id>', 'the task']],
    options: reportFlags(),
    action: async (id: string, opts: ReportFlags) => (await import('../data.js')).explainCommand(id, opts),
  });
  define(data, {
    name: 'export',
    description: "the kept tasks in SWE-bench's columns (FAIL_TO_PASS as JSON strings), optionally split",
    options: exportFlags(),
    examples: [
      'alight data export --out tasks.jsonl --split train=0.95,val=0.05 --seed 1',
      'alight data export --format parquet --out tasks.parquet',
    ],
    action: async (opts: ExportFlags) => (await import('../data.js')).exportCommand(opts),
  });
}
