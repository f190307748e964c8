import { type Conversion, convertModel } from '../src/models/convert.js';
import { type Merged, mergeAdapter } from '../src/models/merge.js';
import { knownModels, packagesOf } from '../src/serve/models.js';
import { type ModelListing, renderConversion, renderModelList } from '../src/ui/models-report.js';
import { setupProgress } from '../src/ui/setup-progress.js';
import { printJson, withInterrupt } from './shared.js';
import type { ConvertFlags, MergeFlags, ModelsListFlags } from './table/declared-models.js';

/** `alight models convert`: a GGUF model as a Hugging Face folder for `alight train` and vLLM. */
export async function modelsConvert(model: string, flags: ConvertFlags): Promise<Conversion> {
  const log = (line: string): void => {
    process.stderr.write(`alight models convert: ${line}\n`);
  };
  const record = await withInterrupt((signal) =>
    convertModel({ model, out: flags.out, log, setup: setupProgress(), signal }),
  );
  if (flags.json) printJson({ out: flags.out, ...record });
  else process.stdout.write(renderConversion(flags.out, record));
  return record;
}

/** `alight models merge`: base + LoRA adapter as one folder. */
export async function modelsMerge(flags: MergeFlags): Promise<Merged> {
  const log = (line: string): void => {
    process.stderr.write(`alight models merge: ${line}\n`);
  };
  const merged = await withInterrupt((signal) => mergeAdapter({ ...flags, log, setup: setupProgress(), signal }));
  if (flags.json) printJson(merged);
  else
    process.stdout.write(
      `${merged.path}: ${merged.base} with the rank-${merged.rank} adapter merged into ${merged.layers} layers\n`,
    );
  return merged;
}

/** `alight models list`: the models alight fetches by name. */
export function modelsList(flags: ModelsListFlags): void {
  const rows: ModelListing[] = Object.entries(knownModels).map(([name, m]) => ({
    name,
    kind: m.kind,
    licence: m.licence,
    packages: packagesOf(m),
    source: m.source,
  }));
  if (flags.json) printJson(rows);
  else process.stdout.write(renderModelList(rows));
}
