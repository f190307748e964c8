import { scaffold } from '../src/scaffold.js';

export async function init(dir: string, opts: { force?: boolean }): Promise<string[]> {
  const written = scaffold(dir, opts.force);
  process.stdout.write(`wrote ${written.join(', ')}\n\nNext:\n` +
    `  1. point upstream.url in alight.config.yaml at your engine (vLLM: vllm serve MODEL)\n` +
    `  2. alight record --tasks tasks.jsonl -n 2 -- node harness.mjs\n` +
    `  3. alight traces list\n`);
  return written;
}
