import { type Command, Option } from 'commander';
import type { compareCommand, GradeFlags, rewardCommand, SwebenchFlags } from '../eval.js';
import type { EvalJudgeFlags } from '../eval-judge.js';
import {
  alias,
  concurrencyOption,
  configFileOption,
  dbOption,
  engineFlags,
  evalK8sOptions,
  gradeK8sOptions,
  graderOptions,
  gradingOptions,
  jsonOption,
  judgeFlags,
  num,
  rolloutsOption,
  runOption,
  runtimeOption,
  storeOptions,
} from '../options.js';
import { define, group } from './define.js';

const timeoutOption = (description: string): Option =>
  new Option('--timeout <seconds>', description).argParser(num).default(1800);

export function registerEval(program: Command): void {
  const evaluation = group(
    program,
    'eval',
    'run a harness over SWE-bench-style tasks and grade its patches; judge a recorded run',
  );
  defineSwebench(evaluation);
  define(evaluation, {
    name: 'compare',
    description: 'two eval runs paired per instance, with an exact McNemar test',
    args: [
      ['<a>', 'a run name (its eval summary in the run folder) or a summary.json'],
      ['<b>', 'the other'],
    ],
    options: [dbOption('locates the run folders'), configFileOption(), jsonOption()],
    examples: ['alight eval compare eval-before eval-after'],
    action: async (a: string, b: string, opts: Parameters<typeof compareCommand>[2]) =>
      (await import('../eval.js')).compareCommand(a, b, opts),
  });
  define(evaluation, {
    name: 'reward',
    description:
      "grade the current workspace's diff for the task in ALIGHT_TASK_JSON; prints 1 or 0 (use as --reward-cmd)",
    options: [
      new Option('--repos <dir>', 'local clones or bundles, to grade in a fresh workspace').makeOptionMandatory(),
      new Option('--workspace <dir>', "the agent's workspace (default: the current folder)"),
      timeoutOption('longest test run'),
      ...gradingOptions(),
    ],
    examples: ['alight record --tasks tasks.jsonl --reward-cmd "alight eval reward --repos repos/" -- python agent.py'],
    action: async (opts: Parameters<typeof rewardCommand>[0]) => (await import('../eval.js')).rewardCommand(opts),
  });
  defineGrade(evaluation);
  define(evaluation, {
    name: 'judge',
    description:
      "score a recorded run's rollouts with a judge after the fact (rewards of their own, beside any check, with " +
      'their agreement)',
    args: [['<run>', 'the run (alight runs list)']],
    options: [...Object.values(judgeFlags()), ...storeOptions(), jsonOption('print the summary as JSON')],
    examples: [
      'alight eval judge probe-1 --judge http://127.0.0.1:8000/v1 --rubric rubric.md',
      'alight eval judge probe-1 --judge-mode single --json',
    ],
    action: async (run: string, opts: EvalJudgeFlags) => (await import('../eval-judge.js')).evalJudgeCommand(run, opts),
  });
}

/**
 * What runs a harness over instances and grades its attempts: `eval swebench`, and `data probe` (which measures the
 * kept tasks: `k` attempts by default). `-n`, `--concurrency` and `--run` as record and train spell them; `-k`,
 * `--workers`, `--run-id` too.
 */
export function attemptOptions(k: number, runName: string): Option[] {
  const rollouts = rolloutsOption(undefined, 'attempts per instance (pass@k)').default(k);
  const concurrency = concurrencyOption(undefined, 'harnesses (and grades) at once').default(2);
  const run = runOption(`run name (default: ${runName}-<time>; the same name resumes it)`);
  return [
    new Option('--instances <ids>', 'comma-separated instance ids to run (default: all)'),
    ...[rollouts, alias('-k <k>', rollouts), concurrency, alias('--workers <n>', concurrency)],
    ...Object.values(engineFlags()),
    new Option(
      '--repos <dir>',
      'agents work in fresh workspaces made from local clones (owner__name/) or bundles (owner__name.bundle)',
    ),
    runtimeOption(),
    ...evalK8sOptions(),
    timeoutOption('kill a harness after this long'),
    new Option('--grade-timeout <seconds>', 'longest test run when grading').argParser(num).default(1800),
    ...[run, alias('--run-id <id>', run)],
    new Option('--out <dir>', 'where predictions, reports and summary go (default: the run folder)'),
    ...gradingOptions(),
    ...graderOptions(),
    ...storeOptions(),
  ];
}

/** The harness and its arguments, after `--`. */
export const harnessArgs: [string, string][] = [
  ['<cmd>', "harness command (runs in the instance's workspace; ALIGHT_TASK_JSON holds the SWE-bench row)"],
  ['[args...]', 'its arguments'],
];

function defineSwebench(evaluation: Command): void {
  define(evaluation, {
    name: 'swebench',
    description:
      'each instance × k (-n): a fresh workspace at base_commit, the ' +
      'harness through the gateway (recorded, mode val), its diff graded',
    args: harnessArgs,
    passThrough: true,
    options: [
      new Option('--tasks <file>', "instances in SWE-bench's columns (JSONL, JSON, Parquet)"),
      new Option('--from-db', 'the tasks alight data kept'),
      ...attemptOptions(1, 'eval'),
      jsonOption('print the run summary (schema_version 2) as JSON'),
    ],
    examples: [
      'alight eval swebench --tasks tasks.jsonl --repos repos/ --serve gemma3-270m -- python agent.py',
      'alight eval swebench --tasks verified.jsonl --runtime ' +
        'docker --upstream http://localhost:8000/v1 -n 3 -- python agent.py',
    ],
    action: async (cmd: string, args: string[], opts: SwebenchFlags) =>
      (await import('../eval.js')).swebenchCommand(cmd, args, opts),
  });
}

/** `eval grade` opens no store: it grades files into --out; it reads the config only for the Kubernetes grader. */
function defineGrade(evaluation: Command): void {
  const concurrency = concurrencyOption(undefined, 'instances graded at once').default(1);
  define(evaluation, {
    name: 'grade',
    description:
      'grade predictions: a fresh tree at base_commit (a workspace or ' +
      "the instance image), guards, test patch, tests, SWE-bench's rule",
    options: [
      new Option(
        '--predictions <file>',
        'predictions (JSONL, JSON list or dict): instance_id, model_name_or_path, model_patch',
      ).makeOptionMandatory(),
      new Option(
        '--tasks <file>',
        "the instances, in SWE-bench's columns (test_cmd or install_config.test_cmd for the test command)",
      ).makeOptionMandatory(),
      new Option(
        '--repos <dir>',
        'local clones (owner__name/) or bundles (owner__name.bundle) to grade in (else the instance images)',
      ),
      new Option('--out <dir>', 'where report.json files and summary.json go (default: .alight/eval/grade-<time>)'),
      ...[concurrency, alias('--workers <n>', concurrency)],
      timeoutOption('longest test run per instance'),
      ...gradingOptions(),
      ...graderOptions(),
      ...gradeK8sOptions(),
      jsonOption('print the run summary (schema_version 2) as JSON'),
    ],
    examples: [
      'alight eval grade --predictions preds.jsonl --tasks tasks.jsonl --repos repos/ --concurrency 2',
      'alight eval grade --predictions preds.jsonl --tasks tasks.jsonl --repos repos/ --grader podman',
      'alight eval grade --predictions preds.jsonl --tasks verified.jsonl --grader docker',
      'alight eval grade --predictions preds.jsonl --tasks verified.jsonl --grader k8s --namespace grading',
    ],
    action: async (opts: GradeFlags) => (await import('../eval.js')).gradeCommand(opts),
  });
}
