import { type Command, Option } from 'commander';
import { selections } from '../../src/samples/curate.js';
import { onlyWith } from '../flags.js';
import {
  configFileOption,
  configOption,
  int,
  jsonOption,
  num,
  runOption,
  schemaOption,
  storeOptions,
} from '../options.js';
import type { BuildFlags, CurateFlags, diagnoseSamples, showSamples } from '../samples.js';
import { define, group } from './define.js';

/** `--tokenizer`: decoded text next to token ids; the config's `tokenizer` when the flag is absent. */
const tokenizerOption = (what: string): Option =>
  configOption('--tokenizer <spec>', 'tokenizer', `${what}: a tokenizer.json, a model folder, a GGUF or a known model`);

export function registerSamples(program: Command): void {
  const samples = group(program, 'samples', 'turn recorded rollouts into a training batch');
  defineBuild(samples);
  defineCurate(samples);
  define(samples, {
    name: 'diagnose',
    description: 'why calls of a run did not merge into one row: each break classified, the worst shown',
    options: [
      runOption('the run').makeOptionMandatory(),
      tokenizerOption('decode the tokens around each break'),
      new Option('--worst <n>', 'breaks to show (--json shows every one)').argParser(int).default(5).conflicts('json'),
      ...storeOptions(),
      jsonOption('every break as JSON'),
    ],
    examples: ['alight samples diagnose --run my-run --tokenizer gemma3-270m'],
    action: async (opts: Parameters<typeof diagnoseSamples>[0]) =>
      (await import('../samples.js')).diagnoseSamples(opts),
  });
  define(samples, {
    name: 'show',
    description: 'rows, lengths, masks, advantages and weights of a batch file',
    args: [['<batch>', 'a batch.safetensors']],
    options: [tokenizerOption("also print each row's decoded text"), configFileOption(), jsonOption()],
    examples: [
      'alight samples show batch.safetensors',
      'alight samples show batch.safetensors --tokenizer models/tiny/tokenizer.json',
    ],
    action: async (path: string, opts: Parameters<typeof showSamples>[1]) =>
      (await import('../samples.js')).showSamples(path, opts),
  });
}

/** `samples build` reads no config: the train keys of the same meaning describe its flags and give their defaults. */
function defineBuild(samples: Command): void {
  define(samples, {
    name: 'build',
    description: "merge a run's calls into rows, compute advantages and loss weights, write batch.safetensors",
    options: [
      runOption('the run').makeOptionMandatory(),
      new Option('--out <file>', 'the batch file to write').makeOptionMandatory(),
      schemaOption('--level <level>', 'train.level'),
      schemaOption('--advantage <estimator>', 'train.advantage'),
      schemaOption('--loss-norm <norm>', 'train.lossNorm'),
      schemaOption('--missing-reward <policy>', 'train.missingReward'),
      schemaOption('--max-prompt-tokens <n>', 'train.maxPromptTokens'),
      schemaOption('--max-response-tokens <n>', 'train.maxResponseTokens', 32768),
      schemaOption('--drop-zero-variance', 'train.dropZeroVariance'),
      schemaOption('--drop-overlong', 'train.dropOverlong'),
      schemaOption('--row-multiple <n>', 'train.rowMultiple'),
      ...storeOptions(),
      jsonOption('print the result as JSON'),
    ],
    examples: [
      'alight samples build --run my-run --out batch.safetensors',
      'alight samples build --run my-run --advantage rloo --loss-norm token-mean --out b.safetensors',
    ],
    action: async (opts: BuildFlags) => (await import('../samples.js')).buildSamples(opts),
  });
}

/** `--keep-thinking` and `--strip` shape what `--render` writes: without it they are refused, not ignored. */
const renderOnly = (option: Option): Option =>
  onlyWith(option, 'render', '--keep-thinking and --strip apply to --render <student model>');

/** `samples curate`: recorded rollouts → supervised examples for `alight sft` (docs/training.md#sft). */
function defineCurate(samples: Command): void {
  define(samples, {
    name: 'curate',
    description:
      "the policy's own best rollouts of recorded runs as supervised examples (their token ids, the loss on what it " +
      'sampled): train.safetensors, val.safetensors for alight sft',
    options: [
      new Option('--run <name>', 'a recorded run (record, eval, train); repeat for several')
        .argParser((value: string, previous: string[] = []) => [...previous, value])
        .makeOptionMandatory(),
      new Option('--out <dir>', 'the folder to write').conflicts('dryRun'),
      new Option(
        '--filter <expr>',
        'tasks to keep, from their rollouts\' rewards: e.g. "0<avg<1", "solved>=1 and n>=4"',
      ),
      new Option('--select <how>', 'per task: the best, the best n, the shortest, or all')
        .choices(selections)
        .default('best'),
      new Option('--max-per-task <n>', "examples a task gives at most (best-n's n)").argParser(int),
      new Option('--min-reward <r>', 'rollouts scoring less are left out').argParser(num),
      new Option('--solved-at <r>', "the reward that counts as solved (the filter's solved, rate, pass@k)")
        .argParser(num)
        .default(1),
      new Option('--keep-truncated', 'keep rollouts with a reply cut at its max_tokens (left out by default)'),
      new Option('--val <n>', 'tasks held out as val.safetensors (a seeded sample)').argParser(int).default(0),
      new Option('--seed <n>', 'the seed of the validation sample').argParser(int).default(0),
      new Option(
        '--render <student>',
        "foreign traces (another model's, a hosted API's): render them with this model folder's chat template, the loss on the assistant's turns",
      ),
      renderOnly(
        new Option(
          '--keep-thinking',
          'with --render: keep reasoning text (summaries, thinking) in the assistant turns',
        ),
      ),
      renderOnly(
        new Option(
          '--strip <regex>',
          "with --render: text removed from system and user messages (a teacher's privileged hints)",
        ),
      ),
      new Option('--parquet', 'also write train.parquet (token ids, loss mask) for other trainers'),
      new Option('--jsonl', 'also write train.jsonl: each example as chat messages and tools, for other trainers'),
      new Option('--dry-run', 'print the counts, write nothing'),
      ...storeOptions(),
      jsonOption('print the result as JSON'),
    ],
    examples: [
      'alight samples curate --run probe-1 --filter "solved>=1" --min-reward 1 --out data/rft',
      'alight samples curate --run a --run b --select best-n --max-per-task 2 --val 20 --parquet --out data/rft',
      'alight samples curate --run probe-1 --filter "0<avg<1" --dry-run',
      'alight samples curate --run claude-code --min-reward 1 --render models/student --out data/distil',
    ],
    action: async (opts: CurateFlags) => (await import('../samples.js')).curateSamples(opts),
  });
}
