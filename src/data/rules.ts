import type { TaskFacts } from '../store/data.js';

export interface RuleOptions {
  minStatementChars: number;
  minFiles: number;
  maxFiles: number;
  maxTests: number;
  requireEnv: boolean;
  /** R2E-Gym's commit filter (strict preset): fewer than this many non-test files … */
  maxSourceFiles: number;
  /** … fewer than this many non-test changed lines, and a patch under this many bytes. */
  maxSourceLines: number;
  maxPatchBytes: number;
}

/** What a rule sees: the task's numbers, and whether it names an environment. */
export type RuleInput = TaskFacts & { has_env: boolean };

interface Rule {
  /** Why a task is dropped, in words; null keeps it. */
  check(t: RuleInput, o: RuleOptions): string | null;
  source: string;
}

/** The cleaning rules (research notes §3.1), each with the reason it records per dropped task. */
export const rules: Record<string, Rule> = {
  'empty-f2p': {
    check: (t) => (t.n_f2p === 0 ? 'no FAIL_TO_PASS tests: nothing shows the fix works' : null),
    source: 'SWE-smith gather.py (≥ 1 F2P)',
  },
  'short-statement': {
    check: (t, o) =>
      t.ps_chars < o.minStatementChars
        ? `problem statement has ${t.ps_chars} characters (< ${o.minStatementChars})`
        : null,
    source: 'SWE-rebench stage 1 (> 10 characters); Agent Lightning step 1 (empty)',
  },
  'files-changed': {
    check: (t, o) =>
      t.n_files < o.minFiles || t.n_files > o.maxFiles
        ? `the patch changes ${t.n_files} files (allowed ${o.minFiles}..${o.maxFiles})`
        : null,
    source: 'SWE-rebench stage 1 (1–15 files)',
  },
  'too-many-tests': {
    check: (t, o) => (t.n_f2p + t.n_p2p > o.maxTests ? `${t.n_f2p + t.n_p2p} listed tests (> ${o.maxTests})` : null),
    source: 'Agent Lightning step 3 (> 200 tests)',
  },
  'missing-env': {
    check: (t, o) =>
      o.requireEnv && !t.has_env ? 'no image_name, install_config or eval_script (--require-env)' : null,
    source: 'Agent Lightning step 2 (image or branch missing)',
  },
  'r2e-size': {
    check: (t, o) =>
      t.n_source_files >= o.maxSourceFiles || t.n_source_lines >= o.maxSourceLines || t.patch_bytes >= o.maxPatchBytes
        ? `${t.n_source_files} non-test files, ${t.n_source_lines} ` +
          `non-test changed lines, ${t.patch_bytes} patch bytes ` +
          `(strict: < ${o.maxSourceFiles}, < ${o.maxSourceLines}, < ${o.maxPatchBytes})`
        : null,
    source: 'R2E-Gym commit heuristics (< 5 files, < 200 lines, < 10,000 chars)',
  },
};
export type RuleName = keyof typeof rules;

export const presets: Record<'default' | 'strict' | 'none', RuleName[]> = {
  default: ['empty-f2p', 'short-statement', 'files-changed', 'too-many-tests', 'missing-env'],
  strict: ['empty-f2p', 'short-statement', 'files-changed', 'too-many-tests', 'missing-env', 'r2e-size'],
  none: [],
};
export type Preset = keyof typeof presets;

export const defaultRuleOptions: RuleOptions = {
  minStatementChars: 10,
  minFiles: 1,
  maxFiles: 15,
  maxTests: 200,
  requireEnv: false,
  maxSourceFiles: 5,
  maxSourceLines: 200,
  maxPatchBytes: 10_000,
};

/** Every rule a task breaks, with its reason (all of them, so `explain` shows the whole story). */
export function breaches(
  t: RuleInput,
  names: readonly RuleName[],
  o: RuleOptions,
): { rule: RuleName; detail: string }[] {
  return names.flatMap((rule) => {
    const detail = rules[rule].check(t, o);
    return detail === null ? [] : [{ rule, detail }];
  });
}
