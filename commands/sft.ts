import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { AlightError, ExitCode } from '../src/errors.js';
import { type SftResult, sft } from '../src/train/sft.js';
import { plainSftProgress } from '../src/ui/train-progress.js';
import { defaultRunName, printJson, withInterrupt, withStore } from './shared.js';
import { refuseLoraUnsupported, resolvedConfig, type TrainFlags } from './train.js';

export type SftFlags = Pick<
  TrainFlags,
  | 'model'
  | 'batchSize'
  | 'lr'
  | 'seed'
  | 'saveEvery'
  | 'reportTo'
  | 'loraRank'
  | 'loraAlpha'
  | 'loraDropout'
  | 'loraTargets'
  | 'loraFrom'
  | 'run'
  | 'db'
  | 'config'
  | 'json'
> & { data: string; epochs: number };

/** `alight sft --data <curated>`: supervised fine-tuning on the examples `samples curate` wrote. */
export async function sftCommand(flags: SftFlags): Promise<SftResult> {
  const { data, val } = curatedFiles(flags.data);
  const { epochs, data: _data, ...trainFlags } = flags;
  return withStore(flags, async (store, fileConfig) => {
    // A checkpoint after the last step only, unless asked: a supervised epoch is many short steps.
    const config = resolvedConfig(store, fileConfig, { ...trainFlags, saveEvery: flags.saveEvery ?? 0 });
    if (config.train.backend !== 'torch')
      throw new AlightError('alight sft trains on the torch worker (verl: not yet)', ExitCode.usage);
    refuseLoraUnsupported(config.train);
    const write = (line: string): void => {
      process.stderr.write(`alight: ${line}\n`);
    };
    const result = await withInterrupt((signal) =>
      sft({
        store,
        c: config.train,
        run: flags.run ?? defaultRunName('sft'),
        data,
        val,
        epochs,
        signal,
        onEvent: plainSftProgress(write),
      }),
    );
    if (flags.json) printJson(result);
    else
      process.stdout.write(
        `run ${result.run}: ${result.steps.length} steps; checkpoint ${result.checkpoint}\n` +
          `RL from it: alight train --init-from ${result.run} … -- <harness>\n`,
      );
    return result;
  });
}

/** A curated folder's train.safetensors (and val.safetensors when there is one), or a file given itself. */
function curatedFiles(path: string): { data: string; val: string | null } {
  if (!existsSync(path)) throw new AlightError(`--data ${path}: no such file or folder`, ExitCode.input);
  if (!statSync(path).isDirectory()) return { data: path, val: null };
  const val = join(path, 'val.safetensors');
  return { data: join(path, 'train.safetensors'), val: existsSync(val) ? val : null };
}
