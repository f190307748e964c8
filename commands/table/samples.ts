import { type Command, Option } from 'commander';
import { configFileOption, configOption, int, jsonOption, runOption, schemaOption, storeOptions } from '../options.js';
import type { BuildFlags, diagnoseSamples, showSamples } from '../samples.js';
import { define, group } from './define.js';

/** `--tokenizer`: decoded text next to token ids; the config's `tokenizer` when the flag is absent. */
const tokenizerOption = (what: string): Option =>
  configOption('--tokenizer <spec>', 'tokenizer', `${what}: a tokenizer.json, a model folder, a GGUF or a known model`);

export function registerSamples(program: Command): void {
  const samples = group(program, 'samples', 'turn recorded rollouts into a training batch');
  defineBuild(samples);
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
