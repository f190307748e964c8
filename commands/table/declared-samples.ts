import { Option } from 'commander';
import { type Selection, selections } from '../../src/samples/curate.js';
import { alwaysSet, type FlagsOf, flag, onlyWith } from '../flags.js';
import {
  configFileOption,
  configOption,
  int,
  jsonOption,
  num,
  runOption,
  schemaOption,
  storeFlags,
} from '../options.js';

// The flags of `alight samples`' commands, apart from their rows, as declared.ts explains: commands/samples.ts reads
// their types.

/** `--tokenizer`: decoded text next to token ids; the config's `tokenizer` when the flag is absent. */
const tokenizerOption = (what: string) =>
  configOption('--tokenizer <spec>', 'tokenizer', `${what}: a tokenizer.json, a model folder, a GGUF or a known model`);

/** `--run`: the one run a command reads. */
const theRun = () => alwaysSet<string>(runOption('the run').makeOptionMandatory());

/** `samples build`'s flags: it reads no config, so the train keys of the same meaning describe them and their defaults. */
export const buildFlags = () => ({
  run: theRun(),
  out: alwaysSet<string>(new Option('--out <file>', 'the batch file to write').makeOptionMandatory()),
  level: schemaOption('--level <level>', 'train.batch.level'),
  advantage: schemaOption('--advantage <estimator>', 'train.batch.advantage'),
  lossNorm: schemaOption('--loss-norm <norm>', 'train.batch.lossNorm'),
  missingReward: schemaOption('--missing-reward <policy>', 'train.batch.missingReward'),
  maxPromptTokens: schemaOption('--max-prompt-tokens <n>', 'train.batch.maxPromptTokens'),
  maxResponseTokens: schemaOption('--max-response-tokens <n>', 'train.batch.maxResponseTokens', 32768),
  dropZeroVariance: schemaOption('--drop-zero-variance', 'train.batch.dropZeroVariance'),
  dropOverlong: schemaOption('--drop-overlong', 'train.batch.dropOverlong'),
  rowMultiple: schemaOption('--row-multiple <n>', 'train.batch.rowMultiple'),
  ...storeFlags(),
  json: jsonOption('print the result as JSON'),
});
export type BuildFlags = FlagsOf<ReturnType<typeof buildFlags>>;

/** `--keep-thinking` and `--strip` shape what `--render` writes: without it they are refused, not ignored. */
const renderOnly = <O extends Option>(option: O): O =>
  onlyWith(option, 'render', '--keep-thinking and --strip apply to --render <student model>');

/** Which tasks and rollouts `samples curate` keeps. */
const selectionFlags = () => ({
  filter: flag<string>(
    new Option('--filter <expr>', 'tasks to keep, from their rollouts\' rewards: e.g. "0<avg<1", "solved>=1 and n>=4"'),
  ),
  select: alwaysSet<Selection>(
    new Option('--select <how>', 'per task: the best, the best n, the shortest, or all')
      .choices(selections)
      .default('best'),
  ),
  maxPerTask: flag<number>(
    new Option('--max-per-task <n>', "examples a task gives at most (best-n's n)").argParser(int),
  ),
  minReward: flag<number>(new Option('--min-reward <r>', 'rollouts scoring less are left out').argParser(num)),
  solvedAt: alwaysSet<number>(
    new Option('--solved-at <r>', "the reward that counts as solved (the filter's solved, rate, pass@k)")
      .argParser(num)
      .default(1),
  ),
  keepTruncated: flag<boolean>(
    new Option('--keep-truncated', 'keep rollouts with a reply cut at its max_tokens (left out by default)'),
  ),
  val: alwaysSet<number>(
    new Option('--val <n>', 'tasks held out as val.safetensors (a seeded sample)').argParser(int).default(0),
  ),
  seed: alwaysSet<number>(new Option('--seed <n>', 'the seed of the validation sample').argParser(int).default(0)),
});

/** Foreign traces rendered with the student's chat template. */
const renderFlags = () => ({
  render: flag<string>(
    new Option(
      '--render <student>',
      "foreign traces (another model's, a hosted API's): render them with this model folder's chat template, the loss on the assistant's turns",
    ),
  ),
  keepThinking: renderOnly(
    flag<boolean>(
      new Option('--keep-thinking', 'with --render: keep reasoning text (summaries, thinking) in the assistant turns'),
    ),
  ),
  strip: renderOnly(
    flag<string>(
      new Option(
        '--strip <regex>',
        "with --render: text removed from system and user messages (a teacher's privileged hints)",
      ),
    ),
  ),
});

/** `samples curate`'s flags: recorded rollouts → supervised examples for `alight sft` (docs/training.md#sft). */
export const curateFlags = () => ({
  run: alwaysSet<string[]>(
    new Option('--run <name>', 'a recorded run (record, eval, train); repeat for several')
      .argParser((value: string, previous: string[] = []) => [...previous, value])
      .makeOptionMandatory(),
  ),
  out: flag<string>(new Option('--out <dir>', 'the folder to write').conflicts('dryRun')),
  ...selectionFlags(),
  ...renderFlags(),
  parquet: flag<boolean>(new Option('--parquet', 'also write train.parquet (token ids, loss mask) for other trainers')),
  jsonl: flag<boolean>(
    new Option('--jsonl', 'also write train.jsonl: each example as chat messages and tools, for other trainers'),
  ),
  dryRun: flag<boolean>(new Option('--dry-run', 'print the counts, write nothing')),
  ...storeFlags(),
  json: jsonOption('print the result as JSON'),
});
export type CurateFlags = FlagsOf<ReturnType<typeof curateFlags>>;

/** `samples diagnose`'s flags. */
export const diagnoseFlags = () => ({
  run: theRun(),
  tokenizer: tokenizerOption('decode the tokens around each break'),
  worst: alwaysSet<number>(
    new Option('--worst <n>', 'breaks to show (--json shows every one)').argParser(int).default(5).conflicts('json'),
  ),
  ...storeFlags(),
  json: jsonOption('every break as JSON'),
});
export type DiagnoseFlags = FlagsOf<ReturnType<typeof diagnoseFlags>>;

/** `samples show`'s flags: it reads a file, and the config only for its tokenizer. */
export const showFlags = () => ({
  tokenizer: tokenizerOption("also print each row's decoded text"),
  config: configFileOption(),
  json: jsonOption(),
});
export type ShowFlags = FlagsOf<ReturnType<typeof showFlags>>;
