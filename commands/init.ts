import { scaffold, type Template } from '../src/scaffold.js';

const next: Record<Template, string[]> = {
  basic: [
    'point upstream.url in alight.config.yaml at your engine (vLLM: alight serve-vllm MODEL)',
    'alight record --tasks tasks.jsonl -n 2 -- node harness.mjs',
    'alight traces list',
  ],
  swe: [
    'alight doctor --setup --backend verl',
    'alight data import <SWE-bench-style file> && alight data clean && alight data dedupe && alight data decontaminate',
    'alight data export --format jsonl --out train.jsonl && node fetch-repos.mjs train.jsonl',
    'alight train --dry-run -- node swe-agent.mjs',
    'alight train -- node swe-agent.mjs',
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
