// `npm run demo`: the recording path end to end on this machine, with no GPU and no network.
// A scripted vLLM-format engine (test/helpers/scripted-upstream.ts: exact byte-level token ids and logprobs)
// stands in for a model until `alight serve` (the embedded llama.cpp engine) and `alight train` land.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startScriptedUpstream } from '../test/helpers/scripted-upstream.js';

const bin = fileURLToPath(new URL('../bin/alight.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'alight-demo-'));
const engine = await startScriptedUpstream({ reply: (i) => (i % 3 === 0 ? 'The answer is 41' : '42'), chunkDelayMs: 40, tokensPerChunk: 2 });
// Asynchronous: the engine answers from this process while alight runs.
const alight = async (...args: string[]): Promise<number> => {
  const [code] = await once(spawn(process.execPath, [bin, ...args], { cwd: dir, stdio: 'inherit' }), 'close');
  return code ?? 1;
};

console.log(`demo project in ${dir}\n`);
await alight('init', '.');
const code = await alight('record', '--upstream', engine.url, '--run', 'demo', '--tasks', 'tasks.jsonl', '-n', '4', '--concurrency', '4', '--', 'node', 'harness.mjs');
await alight('runs', 'list');
await engine.close();
console.log(`\nexport the traces: node ${bin} traces export --run demo --db ${join(dir, '.alight', 'alight.db')} | head -c 600`);
process.exit(code);
