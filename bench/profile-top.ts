/**
 * Summarises a V8 CPU profile (`node --cpu-prof`): the functions with the most self time, and self time by file.
 *
 *   BENCH_CPU_PROF=/tmp/prof npm run bench && node --import tsx bench/profile-top.ts /tmp/prof/*.cpuprofile
 */
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string };
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

const top = 25;

for (const file of process.argv.slice(2)) {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));

  const byFunction = new Map<string, number>();
  const byFile = new Map<string, number>();
  let total = 0;
  let idle = 0;
  for (const [id, us] of selfUs) {
    const { functionName, url } = byId.get(id)!.callFrame;
    if (functionName === '(idle)') { idle += us; continue; }
    total += us;
    const where = url.replace(/^file:\/\/.*?\/(node_modules|src|bench|test)\//, '$1/');
    // No line numbers: under tsx they are those of the transpiled code.
    const key = `${functionName || '(anonymous)'}  ${where}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + us);
    const fileKey = where.startsWith('node:') ? 'node: (core)' : where.startsWith('node_modules/') ? where.split('/').slice(0, 2).join('/') : where || `(${functionName})`;
    byFile.set(fileKey, (byFile.get(fileKey) ?? 0) + us);
  }

  const print = (title: string, rows: Map<string, number>): void => {
    console.log(`\n${title}\n| self ms | share | where |\n|--:|--:|---|`);
    for (const [key, us] of [...rows].sort((a, b) => b[1] - a[1]).slice(0, top)) {
      console.log(`| ${(us / 1000).toFixed(0)} | ${((100 * us) / total).toFixed(1)}% | \`${key.trim()}\` |`);
    }
  };
  console.log(`# ${file}: ${(total / 1000).toFixed(0)} ms busy, ${(idle / 1000).toFixed(0)} ms idle`);
  print('Self time by function', byFunction);
  print('Self time by file', byFile);
}
