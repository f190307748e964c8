import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { TrainConfig } from '../src/config/train-schema.js';
import { AlightError, ExitCode } from '../src/errors.js';
import { cudaGpus, hasFlashAttention, verlPython } from '../src/setup/verl-env.js';
import { refuseLoraUnsupported } from '../src/train/rules.js';
import { readExamples, type SftResult, sft } from '../src/train/sft.js';
import { composedVerlConfig } from '../src/train/verl-config.js';
import { sftOnVerl, verlSftOverrides } from '../src/train/verl-sft.js';
import { plainSftProgress } from '../src/ui/train-progress.js';
import { renderSftResult, renderVerlOverrides } from '../src/ui/train-report.js';
import { defaultRunName, printJson, resolvedConfig, withInterrupt, withStore } from './shared.js';
import type { SftFlags } from './table/declared.js';

/** `alight sft --data <curated>`: supervised fine-tuning on the examples `samples curate` wrote. */
export async function sftCommand(flags: SftFlags): Promise<SftResult | VerlSftDryRun> {
  const { data, val } = curatedFiles(flags.data);
  const { epochs } = flags;
  return withStore(flags, async (store, fileConfig) => {
    // A checkpoint after the last step only, unless asked: a supervised epoch is many short steps.
    const config = resolvedConfig(store, fileConfig, { ...flags, saveEvery: flags.saveEvery ?? 0 });
    refuseLoraUnsupported(config.train);
    const run = flags.run ?? defaultRunName('sft');
    if (flags.dryRun)
      return verlSftDryRun(config.train, { data, val, epochs, run, db: store.path }, Boolean(flags.json));
    const write = (line: string): void => {
      process.stderr.write(`alight: ${line}\n`);
    };
    const train = config.train.backend === 'verl' ? sftOnVerl : sft;
    const result = await withInterrupt((signal) =>
      train({
        store,
        c: config.train,
        run,
        data,
        val,
        epochs,
        signal,
        onEvent: plainSftProgress(write),
      }),
    );
    if (flags.json) printJson(result);
    else process.stdout.write(renderSftResult(result));
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

export interface VerlSftDryRun {
  overrides: string[];
  composed: string | null;
}

/** `alight sft --backend verl --dry-run`: the overrides and verl's composed SFT config; nothing runs. */
function verlSftDryRun(
  c: TrainConfig,
  o: { data: string; val: string | null; epochs: number; run: string; db: string },
  json: boolean,
): VerlSftDryRun {
  if (c.backend !== 'verl')
    throw new AlightError('--dry-run shows the verl SFT config: pass --backend verl', ExitCode.usage);
  const rows = readExamples(o.data).flatMap((e) => e.rows);
  const runDir = resolve(o.db, '..', 'runs', o.run);
  const maxLength = Math.max(...rows.map((r) => r.tokens.length));
  const python = verlPython();
  const flashAttention = python !== null && hasFlashAttention(python);
  const overrides = verlSftOverrides(c, { ...o, runDir, maxLength, cpu: cudaGpus() === 0, flashAttention });
  const composed = python ? composedVerlConfig(python, 'sft_trainer_engine', overrides) : null;
  if (json) printJson({ overrides, composed });
  else process.stdout.write(renderVerlOverrides(overrides, composed));
  return { overrides, composed };
}
