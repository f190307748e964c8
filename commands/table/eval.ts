import type { Command } from 'commander';
import {
  type CompareFlags,
  compareFlags,
  type EvalJudgeFlags,
  evalJudgeFlags,
  type GradeFlags,
  gradeFlags,
  type RewardFlags,
  rewardFlags,
  type SwebenchFlags,
  swebenchFlags,
} from './declared-eval.js';
import { define, group } from './define.js';

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
    options: compareFlags(),
    examples: ['alight eval compare eval-before eval-after'],
    action: async (a: string, b: string, opts: CompareFlags) => (await import('../eval.js')).compareCommand(a, b, opts),
  });
  define(evaluation, {
    name: 'reward',
    description:
      "grade the current workspace's diff for the task in ALIGHT_TASK_JSON; prints 1 or 0 (use as --reward-cmd)",
    options: rewardFlags(),
    examples: ['alight record --tasks tasks.jsonl --reward-cmd "alight eval reward --repos repos/" -- python agent.py'],
    action: async (opts: RewardFlags) => (await import('../eval.js')).rewardCommand(opts),
  });
  defineGrade(evaluation);
  define(evaluation, {
    name: 'judge',
    description:
      "score a recorded run's rollouts with a judge after the fact (rewards of their own, beside any check, with " +
      'their agreement)',
    args: [['<run>', 'the run (alight runs list)']],
    options: evalJudgeFlags(),
    examples: [
      'alight eval judge probe-1 --judge http://127.0.0.1:8000/v1 --rubric rubric.md',
      'alight eval judge probe-1 --judge-mode single --json',
    ],
    action: async (run: string, opts: EvalJudgeFlags) => (await import('../eval-judge.js')).evalJudgeCommand(run, opts),
  });
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
    options: swebenchFlags(),
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
  define(evaluation, {
    name: 'grade',
    description:
      'grade predictions: a fresh tree at base_commit (a workspace or ' +
      "the instance image), guards, test patch, tests, SWE-bench's rule",
    options: gradeFlags(),
    examples: [
      'alight eval grade --predictions preds.jsonl --tasks tasks.jsonl --repos repos/ --concurrency 2',
      'alight eval grade --predictions preds.jsonl --tasks tasks.jsonl --repos repos/ --grader podman',
      'alight eval grade --predictions preds.jsonl --tasks verified.jsonl --grader docker',
      'alight eval grade --predictions preds.jsonl --tasks verified.jsonl --grader k8s --namespace grading',
    ],
    action: async (opts: GradeFlags) => (await import('../eval.js')).gradeCommand(opts),
  });
}
