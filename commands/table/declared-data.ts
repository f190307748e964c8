import { Option } from 'commander';
import type { Preset } from '../../src/data/rules.js';
import { type ExportFormat, exportFormats, type Format, formats } from '../../src/data/task.js';
import { alwaysSet, type FlagsOf, flag, onlyWith } from '../flags.js';
import { aliased, int, jsonOption, num, storeFlags } from '../options.js';
import { attemptFlags, graderFlags, gradingFlags, reposOption, timeoutOption } from './declared-eval.js';

// The flags of `alight data`'s commands, apart from their rows, as declared.ts explains: commands/data.ts and
// data-measure.ts read their types.

/** A whole-number flag with a default. */
const intOption = (flags: string, description: string, value: number) =>
  alwaysSet<number>(new Option(flags, description).argParser(int).default(value));

/** What every data command ends with: the store, and its summary as JSON. */
const storeAndJson = (what?: string) => ({ ...storeFlags(), json: jsonOption(what) });

/** `alight data import`'s flags. */
export const importFlags = () => ({
  source: flag<string>(new Option('--source <name>', 'label for these rows (default: the file name)')),
  format: alwaysSet<Format | 'auto'>(
    new Option('--format <format>', 'the export they come from').choices(['auto', ...formats]).default('auto'),
  ),
  ...storeAndJson('JSON summary'),
});
export type ImportFlags = FlagsOf<ReturnType<typeof importFlags>>;

/** `alight data clean`'s flags: the preset, and the limits of its rules. */
export const cleanFlags = () => ({
  preset: alwaysSet<Preset>(
    new Option('--preset <preset>', "default: the research notes' structural rules; strict adds R2E-Gym size limits")
      .choices(['default', 'strict', 'none'])
      .default('default'),
  ),
  minStatementChars: intOption('--min-statement-chars <n>', 'shorter problem statements are dropped', 10),
  minFiles: intOption('--min-files <n>', 'patches changing fewer files are dropped', 1),
  maxFiles: intOption('--max-files <n>', 'patches changing more files are dropped', 15),
  maxTests: intOption('--max-tests <n>', 'tasks listing more FAIL_TO_PASS + PASS_TO_PASS tests are dropped', 200),
  requireEnv: flag<boolean>(new Option('--require-env', 'drop tasks without an image, install_config or eval_script')),
  ...storeAndJson('JSON summary'),
});
export type CleanFlags = FlagsOf<ReturnType<typeof cleanFlags>>;

/** `alight data dedupe`'s flags: the near-duplicate settings mean nothing with --no-near. */
export const dedupeFlags = () => ({
  threshold: alwaysSet<number>(
    new Option('--threshold <j>', 'verified Jaccard for near duplicates').argParser(num).default(0.8).conflicts('near'),
  ),
  perms: intOption('--perms <n>', 'MinHash permutations', 128).conflicts('near'),
  shingle: intOption('--shingle <n>', 'words per shingle', 5).conflicts('near'),
  near: alwaysSet<boolean>(new Option('--no-near', 'exact duplicates only')),
  ...storeAndJson('JSON summary'),
});
export type DedupeFlags = FlagsOf<ReturnType<typeof dedupeFlags>>;

/** `alight data decontaminate`'s flags. */
export const decontaminateFlags = () => ({
  against: flag<string[]>(
    new Option(
      '--against <files...>',
      'reference exports (e.g. SWE-bench Verified) besides the built-in Verified list',
    ),
  ),
  builtin: alwaysSet<boolean>(
    new Option('--no-builtin', 'do not use the built-in SWE-bench Verified ids and repositories'),
  ),
  keepRepos: flag<boolean>(new Option('--keep-repos', "do not drop tasks from the reference's repositories")),
  ngram: intOption('--ngram <n>', 'flag statements sharing a run of this many words with a reference statement', 13),
  ...storeAndJson('JSON summary'),
});
export type DecontaminateFlags = FlagsOf<ReturnType<typeof decontaminateFlags>>;

/** `alight data validate`'s flags: eval grade's grader (but one image: no --image) and its sandbox switch. */
export function validateFlags() {
  const { image: _image, ...grader } = graderFlags();
  const workers = new Option('--workers <n>', 'tasks validated at once').argParser(int).default(1);
  return {
    repos: reposOption('local clones (owner__name/) or bundles to grade in (else the instance images)'),
    ...grader,
    sandbox: gradingFlags().sandbox,
    workers: aliased(alwaysSet<number>(workers), '--concurrency <n>'),
    timeout: timeoutOption('longest test run per grade'),
    force: flag<boolean>(new Option('--force', 'validate again the tasks validated before')),
    ...storeAndJson('JSON summary'),
  };
}
export type ValidateFlags = FlagsOf<ReturnType<typeof validateFlags>>;

/** `alight data probe`'s flags: eval swebench's, over the kept tasks. */
export const probeFlags = () => ({ ...attemptFlags(4, 'probe'), json: jsonOption('JSON summary') });
export type ProbeFlags = FlagsOf<ReturnType<typeof probeFlags>>;

/** `alight data select`'s flags. */
export const selectFlags = () => ({
  probe: flag<string>(new Option('--probe <run>', 'the probe run to select by (default: the latest)')),
  solveRate: alwaysSet<string>(new Option('--solve-rate <range>', 'the solve rates kept').default('0<r<1')),
  addUnsolved: intOption('--add-unsolved <n>', 'never-solved tasks added (a seeded sample)', 0),
  val: intOption('--val <n>', 'of the selected, held out for validation (data export --held-out)', 0),
  seed: intOption('--seed <seed>', 'seed of the samples', 0),
  ...storeAndJson('JSON summary'),
});
export type SelectFlags = FlagsOf<ReturnType<typeof selectFlags>>;

/** `alight data stats` and `data explain`: reports of the store. */
export const reportFlags = () => storeAndJson();
export type ReportFlags = FlagsOf<ReturnType<typeof reportFlags>>;

/** `alight data export`'s flags. */
export const exportFlags = () => ({
  out: alwaysSet<string>(
    new Option('--out <file>', 'output file (with --split, one per part: out.train.jsonl, …)').makeOptionMandatory(),
  ),
  format: alwaysSet<ExportFormat>(
    new Option('--format <format>', 'file format').choices(exportFormats).default('jsonl'),
  ),
  split: flag<string>(new Option('--split <spec>', 'e.g. train=0.95,val=0.05')),
  seed: onlyWith(intOption('--seed <seed>', 'shuffle seed for --split', 0), 'split'),
  heldOut: flag<boolean>(
    new Option('--held-out', 'the tasks data select held out for validation, instead of the kept ones'),
  ),
  ...storeAndJson('JSON summary'),
});
export type ExportFlags = FlagsOf<ReturnType<typeof exportFlags>>;
