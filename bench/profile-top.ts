/**
 * Summarises V8 CPU profiles (`node --cpu-prof`), merged: the functions with the most self time, and self time
 * by file. Builtins such as JSON.parse have no node of their own: their time counts as the caller's self time.
 *
 *   BENCH_CPU_PROF=/tmp/prof npm run bench
 *   node --import tsx bench/profile-top.ts /tmp/prof/CPU.*.*.*.0.*.cpuprofile   # thread 0: not tsx's loader thread
 */
import { readFileSync } from 'node:fs';

interface Profile {
  nodes: { id: number; callFrame: { functionName: string; url: string } }[];
  samples: number[];
  timeDeltas: number[];
}

const top = 25;
const byFunction = new Map<string, number>();
const byFile = new Map<string, number>();
const add = (map: Map<string, number>, key: string, us: number): void => void map.set(key, (map.get(key) ?? 0) + us);
let busy = 0;
let idle = 0;

for (const file of process.argv.slice(2)) {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const frames = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  profile.samples.forEach((id, i) => {
    const us = profile.timeDeltas[i] ?? 0;
    const { functionName, url } = frames.get(id)!;
    if (functionName === '(idle)') {
      idle += us;
      return;
    }
    busy += us;
    // No line numbers: under tsx they are those of the transpiled code.
    const where = url.replace(/^file:\/\/.*?\/(node_modules|src|bench|test)\//, '$1/');
    add(byFunction, `${functionName || '(anonymous)'}  ${where}`.trim(), us);
    const module = where.startsWith('node:')
      ? 'node: (core)'
      : where.startsWith('node_modules/')
        ? where.split('/').slice(0, 2).join('/')
        : where || `(${functionName})`;
    add(byFile, module, us);
  });
}

const print = (title: string, rows: Map<string, number>): void => {
  console.log(`\n${title}\n\n| self ms | share | where |\n|--:|--:|---|`);
  for (const [key, us] of [...rows].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`| ${(us / 1000).toFixed(0)} | ${((100 * us) / busy).toFixed(1)}% | \`${key}\` |`);
  }
};
console.log(
  `${process.argv.length - 2} profile(s): ${(busy / 1000).toFixed(0)} ms busy, ${(idle / 1000).toFixed(0)} ms idle`,
);
print('Self time by function', byFunction);
print('Self time by file', byFile);
