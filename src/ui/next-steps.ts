import type { Template } from '../scaffold.js';

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

/** `alight init`: the files written and the steps that follow for the template. */
export const renderInit = (written: string[], template: Template): string =>
  `wrote ${written.join(', ')}\n\nNext:\n${next[template].map((s, i) => `  ${i + 1}. ${s}`).join('\n')}\n`;

/** `alight serve-vllm`: where vLLM serves, where its key is, and how to record against it. */
export const renderVllmServing = (s: { model: string; url: string; keyFile: string }): string =>
  `vLLM serves ${s.model} at ${s.url}; its API key is in ${s.keyFile}\n` +
  `record against it: export VLLM_KEY=$(cat ${s.keyFile}) and set ` +
  `upstream.apiKeyEnv: VLLM_KEY, upstream.url: ${s.url}\nCtrl-C stops it\n`;
