import type { Conversion } from '../models/convert.js';
import type { KnownModel } from '../serve/models.js';
import { table } from './summary.js';

/** A model `alight models list` names: what it is, its licence, the PyPI packages its file comes in. */
export type ModelListing = Pick<KnownModel, 'kind' | 'licence' | 'source'> & { name: string; packages: string[] };

const percent = (x: number | null): string => (x === null ? '–' : `${(100 * x).toFixed(1)}%`);

/** `alight models convert`: what the folder holds and how closely it follows llama.cpp. */
export function renderConversion(out: string, r: Conversion): string {
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

/** `alight models list`: a table of the models, then each one's source. */
export function renderModelList(rows: ModelListing[]): string {
  return `${table(
    ['name', 'kind', 'licence', 'PyPI'],
    rows.map((r) => [r.name, r.kind, r.licence, r.packages.join(' ')]),
  )}\n\n${rows.map((r) => `${r.name}: ${r.source}`).join('\n')}\n`;
}
