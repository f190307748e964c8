/**
 * The diff monitor's false-positive rate (src/eval/grade/monitor.ts) on real upstream changes: the last commits of
 * SWE-bench's repositories, each split as a task is (its non-test Python changes as the prediction, its test changes as
 * the test patch). A commit the monitor flags is a false positive: these are the projects' own fixes and features, a
 * stand-in for gold patches, which are not reachable from this machine. The tamper flags (tamper-flags.ts) are counted
 * beside, on the same commits, over the prediction's new lines.
 *
 *   BENCH_REPOS=/path/a,/path/b npm run bench:monitor     # git directories (bare or not); default: /work/.mirror/*
 *   BENCH_COMMITS=1500                                     # the last N commits of each that change Python files
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileSections, protectedReason } from '../src/eval/grade/guards.js';
import { addedLines, monitorFlags } from '../src/eval/grade/monitor.js';
import { classesIn, codeOnly } from '../src/eval/grade/tamper-classes.js';

const mirrors = '/work/.mirror';
const repos = process.env.BENCH_REPOS
  ? process.env.BENCH_REPOS.split(',')
  : existsSync(mirrors)
    ? readdirSync(mirrors)
        .map((d) => join(mirrors, d, 'repo'))
        .filter((d) => existsSync(join(d, 'HEAD')))
    : [];
const N = Number(process.env.BENCH_COMMITS ?? 1500);
if (!repos.length) {
  console.error('no repositories: pass BENCH_REPOS=dir,dir (git directories of Python projects)');
  process.exit(2);
}

const cut = '\u0001commit ';
const total = { commits: 0, withTests: 0, flagged: 0, small: 0, smallFlagged: 0, tamper: 0 };
const classes = new Map<string, number>();
const examples: string[] = [];
for (const repo of repos) {
  const log = execFileSync(
    'git',
    ['--git-dir', repo, 'log', '--no-merges', `-n${N}`, `--format=${cut}%h`, '-p', '--no-color', '--', '*.py'],
    { encoding: 'utf8', maxBuffer: 1 << 30 },
  );
  const row = { commits: 0, flagged: 0 };
  for (const chunk of log.split(cut).slice(1)) {
    const sha = chunk.slice(0, chunk.indexOf('\n'));
    const sections = fileSections(chunk.slice(chunk.indexOf('\n') + 1));
    const source = sections.filter((s) => s.file.endsWith('.py') && protectedReason(s.file) === null);
    const tests = sections.filter((s) => protectedReason(s.file) !== null);
    const lines = source.flatMap(addedLines);
    if (!lines.length) continue;
    row.commits++;
    total.commits++;
    if (tests.length) total.withTests++;
    const small = lines.length <= 50;
    if (small) total.small++;
    const flags = monitorFlags(source.map((s) => s.text).join('\n'), tests.map((s) => s.text).join('\n'));
    if (classesIn(codeOnly(lines.join('\n')).split('\n'), lines).length) total.tamper++;
    if (!flags.length) continue;
    row.flagged++;
    total.flagged++;
    if (small) total.smallFlagged++;
    for (const f of flags)
      for (const c of f.reason.replace(/^monitor: /, '').split('; '))
        classes.set(c.split(':')[0], (classes.get(c.split(':')[0]) ?? 0) + 1);
    if (examples.length < 40) examples.push(`${repo.split('/').at(-2)} ${sha} ${flags[0].file}: ${flags[0].reason}`);
  }
  console.log(
    `${repo.split('/').at(-2)}: ${row.flagged} of ${row.commits} commits flagged (${pct(row.flagged, row.commits)})`,
  );
}
console.log(
  `\nall: ${total.flagged} of ${total.commits} commits flagged (${pct(total.flagged, total.commits)}); ` +
    `of those adding ≤ 50 lines ${total.smallFlagged} of ${total.small} (${pct(total.smallFlagged, total.small)}); ` +
    `${total.withTests} commits change tests too; the tamper flags on the same: ${total.tamper} (${pct(total.tamper, total.commits)})`,
);
for (const [c, n] of classes) console.log(`  ${c}: ${n}`);
console.log(`\n${examples.join('\n')}`);

function pct(a: number, b: number): string {
  return `${((100 * a) / Math.max(1, b)).toFixed(2)}%`;
}
