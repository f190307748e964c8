import { scaffold, type Template } from '../src/scaffold.js';

const next: Record<Template, string[]> = {
  basic: [
    'point upstream.url in alight.config.yaml at your engine (vLLM: alight serve-vllm MODEL)',
    'alight record --tasks tasks.jsonl -n 2 -- node harness.mjs',
    'alight traces list',
  ],
  swe: [
    'alight doctor --setup --backend verl',
    'alight serve-vllm <the policy> (its URL is UPSTREAM below)',
    'TASKS=swe-smith.parquet sh recipe.sh   # import, clean, dedupe, decontaminate, validate, probe, select, train, eval',
    'or step by step: each line of recipe.sh, e.g. alight train --dry-run -- node swe-agent.mjs first',
  ],
};

export async function init(dir: string, opts: { force?: boolean; template?: Template }): Promise<string[]> {
  const template = opts.template ?? 'basic';
  const written = scaffold(dir, template, opts.force);
  process.stdout.write(
    `wrote ${written.join(', ')}\n\nNext:\n${next[template].map((s, i) => `  ${i + 1}. ${s}`).join('\n')}\n`,
  );
  return written;
}
