// Records the run the Python cross-check (python/tests) reads: 4 tasks × 3 rollouts through the gateway from the
// openai-SDK harness, with multi-turn rollouts, rewards spread within three groups (the fourth all equal) and sub-agent
// rows. Prints {"db", "run"} as JSON.
//   node --import tsx test/helpers/record-reference-run.ts <dir>
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { alight, FIXTURES } from './cli.js';
import { startScriptedUpstream } from './scripted-upstream.js';

const dir = process.argv[2];
const upstream = await startScriptedUpstream({ reply: (i) => `step ${i} ${'w'.repeat(i % 7)}` });
const db = join(dir, 'alight.db');
const tasks = join(dir, 'tasks.jsonl');
writeFileSync(
  tasks,
  [
    { id: 'a', reward: 1, jitter: 1, turns: 4 },
    { id: 'b', reward: 0.25, jitter: 0.5, turns: 3 },
    { id: 'c', reward: 0, jitter: 2, turns: 2 },
    { id: 'd', reward: 0.5, subagent: true },
  ]
    .map((t) => JSON.stringify(t))
    .join('\n'),
);
const res = await alight([
  'record',
  '--upstream',
  upstream.url,
  '--db',
  db,
  '--run',
  'ref',
  '--tasks',
  tasks,
  '-n',
  '3',
  '--json',
  '--',
  process.execPath,
  join(FIXTURES, 'sdk-harness.mjs'),
]);
await upstream.close();
if (res.code !== 0) throw new Error(`record failed: ${res.stderr}`);
process.stdout.write(`${JSON.stringify({ db, run: 'ref' })}\n`);
