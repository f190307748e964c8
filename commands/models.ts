import { type Conversion, convertModel } from '../src/models/convert.js';
import { type Merged, mergeAdapter } from '../src/models/merge.js';
import { knownModels, packagesOf } from '../src/serve/models.js';
import { setupProgress } from '../src/ui/setup-progress.js';
import { table } from '../src/ui/summary.js';
import { printJson, withInterrupt } from './shared.js';

export interface ConvertFlags {
  out: string;
  json?: boolean;
}

/** `alight models convert`: a GGUF model as a Hugging Face folder for `alight train` and vLLM. */
export async function modelsConvert(model: string, flags: ConvertFlags): Promise<Conversion> {
  const log = (line: string): void => {
    process.stderr.write(`alight models convert: ${line}\n`);
  };
  const record = await withInterrupt((signal) =>
    convertModel({ model, out: flags.out, log, setup: setupProgress(), signal }),
  );
  if (flags.json) printJson({ out: flags.out, ...record });
  else process.stdout.write(summary(flags.out, record));
  return record;
}

function summary(out: string, r: Conversion): string {
  const a = r.agreement;
  const matched = a.prompts.reduce((n, p) => n + p.matches, 0);
  const positions = a.prompts.reduce((n, p) => n + p.positions, 0);
  const template = r.chat_template
    ? 'its own chat template'
    : 'no chat template (a base model: use /v1/completions, or give vLLM --chat-template)';
  return (
    `${out}: ${r.architecture}, ${(r.parameters / 1e6).toFixed(0)}M parameters in float32, ${r.kind}, ${template}\n` +
    `  stop tokens ${r.eos_tokens.join(' ')} (ids ${r.eos_token_ids.join(', ')}); licence: ${r.licence ?? 'not stated'}\n` +
    `  agreement with llama.cpp: ${percent(a.agreement)} of ${positions} greedy tokens (${matched} matched, ` +
    `${a.prompts.length} prompts); prompt tokens ${a.same_prompt_ids ? 'identical' : 'DIFFERENT'}\n` +
    `  ${Math.round(r.seconds.convert + r.seconds.reference + r.seconds.agree)} s; train it with alight train --model ${out}\n`
  );
}

const percent = (x: number | null): string => (x === null ? '–' : `${(100 * x).toFixed(1)}%`);

export interface MergeFlags {
  adapter: string;
  out: string;
  base?: string;
  json?: boolean;
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
export function modelsList(flags: { json?: boolean }): void {
  const rows = Object.entries(knownModels).map(([name, m]) => ({
    name,
    kind: m.kind,
    licence: m.licence,
    packages: packagesOf(m),
    source: m.source,
  }));
  if (flags.json) printJson(rows);
  else
    process.stdout.write(
      `${table(
        ['name', 'kind', 'licence', 'PyPI'],
        rows.map((r) => [r.name, r.kind, r.licence, r.packages.join(' ')]),
      )}\n\n${rows.map((r) => `${r.name}: ${r.source}`).join('\n')}\n`,
    );
}
