import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { AlightError, ExitCode } from '../errors.js';
import type { SetupListener } from '../setup/events.js';
import { ensurePythonEnv } from '../setup/python-env.js';
import { checkOut, pythonStep } from './convert.js';

export interface MergeOptions {
  /** A LoRA adapter folder (a LoRA checkpoint of `alight train`). */
  adapter: string;
  out: string;
  /** The base model; default the one the adapter names. */
  base?: string;
  log: (line: string) => void;
  setup: SetupListener;
  signal?: AbortSignal;
}

/** What `python -m alight_worker.lora merge` reports. */
export interface Merged {
  path: string;
  base: string;
  rank: number;
  layers: number;
}

/** Base + adapter as one Hugging Face folder (float32), for engines that serve full weights. */
export async function mergeAdapter(o: MergeOptions): Promise<Merged> {
  const adapter = resolve(o.adapter);
  if (!existsSync(join(adapter, 'adapter_config.json')))
    throw new AlightError(`${o.adapter}: no LoRA adapter there (adapter_config.json)`, ExitCode.input);
  if (o.base && !existsSync(join(o.base, 'config.json')))
    throw new AlightError(`--base ${o.base}: no model there (config.json)`, ExitCode.input);
  const out = resolve(o.out);
  const existed = checkOut(out);
  const python = await ensurePythonEnv(o.setup);
  const args = ['merge', '--adapter', adapter, '--out', out, ...(o.base ? ['--base', resolve(o.base)] : [])];
  try {
    return await pythonStep<Merged>(python, 'alight_worker.lora', args, o, 'the merge');
  } catch (err) {
    rmSync(out, { recursive: true, force: true });
    if (existed) mkdirSync(out);
    throw err;
  }
}
