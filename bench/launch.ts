/**
 * The process launcher against the raw command: N short processes (`true`, then `sh -c 'echo …'` with its output
 * captured) started through node's own spawn and through src/process/launch.ts, one at a time and 8 at once. What it
 * costs is wall time per process and this process's CPU per process (execa's set-up, the group, the supervision).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../src/process/launch.js';
import { localLauncher } from '../src/runner/launcher.js';
import { perItem } from './per-item.js';

const n = Number(process.env.N ?? 300);

type Start = (i: number) => Promise<unknown>;

function raw(command: string, args: string[], capture: boolean): Start {
  return () =>
    new Promise((resolve) => {
      const child = spawn(command, args, { stdio: ['ignore', capture ? 'pipe' : 'ignore', 'ignore'], detached: true });
      let out = '';
      child.stdout?.on('data', (d) => (out += d));
      child.on('close', () => resolve(out));
    });
}

const dir = mkdtempSync(join(tmpdir(), 'alight-bench-launch-'));
const signal = new AbortController().signal;
const cases: [string, Start, Start][] = [
  [
    '`true`, no output',
    raw('true', [], false),
    () => run({ command: 'true', args: [], group: true, timeoutMs: 60_000 }),
  ],
  [
    '`sh -c echo`, stdout captured',
    raw('sh', ['-c', 'echo 0.5'], true),
    () => run({ command: 'sh', args: ['-c', 'echo 0.5'], stdout: { tail: 65536 }, group: true, timeoutMs: 60_000 }),
  ],
  [
    'a harness: `sh -c echo` to log files (localLauncher)',
    raw('sh', ['-c', 'echo hi'], false),
    (i) =>
      localLauncher.run({
        command: 'sh',
        args: ['-c', 'echo hi'],
        env: {},
        withhold: [],
        output: { stdout: join(dir, `${i}.out`), stderr: join(dir, `${i}.err`) },
        timeoutMs: 60_000,
        signal,
      }),
  ],
];

console.log(
  `| processes | parallel | raw spawn ms/proc | launcher ms/proc | ratio | raw CPU ms/proc | launcher CPU ms/proc |`,
);
console.log('|---|---|---|---|---|---|---|');
for (const [name, rawStart, launched] of cases) {
  for (const parallel of [1, 8]) {
    await perItem(n, parallel, rawStart); // warm-up
    const a = await perItem(n, parallel, rawStart);
    const b = await perItem(n, parallel, launched);
    console.log(
      `| ${name} | ${parallel} | ${a.wallMs.toFixed(2)} | ${b.wallMs.toFixed(2)} | ${(b.wallMs / a.wallMs).toFixed(2)}× | ` +
        `${a.cpuMs.toFixed(2)} | ${b.cpuMs.toFixed(2)} |`,
    );
  }
}
rmSync(dir, { recursive: true, force: true });
