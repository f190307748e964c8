// bench:learn's numbers: paired tests of each trained checkpoint against the base model (greedy and sampled), the
// held-out curve as an SVG, and the table for bench/BENCHMARKS.md. Pure over the evaluations; the one write is the plot.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { compareRuns, signFlipExact } from '../../src/eval/run/compare.js';
import { plotSvg } from '../../src/ui/plot.js';

/** bench/learn/evaluate.py's summary of one model on the held-out split; the sampled fields with --samples k. */
export interface Evaluation {
  model: string;
  submitted_ids: string[];
  resolved_ids: string[];
  pass_rate: number;
  sampled_pass_rate?: number;
  sampled_per_task?: number[];
  seconds: number;
}

export interface Side {
  name: string;
  trainSeconds: number;
  trainReward: (number | null)[];
  evals: { step: number; evaluation: Evaluation }[];
  extra: unknown;
}

interface Input {
  settings: Record<string, unknown>;
  base: Evaluation;
  sides: Side[];
  wall: number;
  out: string;
}

const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;

/** Greedy pass@1 of a checkpoint against the base: the tasks each alone passes and the exact McNemar p. */
export function paired(base: Evaluation, trained: Evaluation) {
  const c = compareRuns(base, trained);
  return {
    heldOut: c.common,
    base: base.pass_rate,
    trained: trained.pass_rate,
    gainedTasks: c.onlyB.length,
    lostTasks: c.onlyA.length,
    pValue: c.pValue,
  };
}

/** Sampled pass@1 (k seeded samples a task, the same draws for both models): the tasks whose passes rose or fell and
 * the exact sign-flip p over the per-task differences; null when either side was not sampled. */
export function pairedSampled(base: Evaluation, trained: Evaluation) {
  const [a, b] = [base.sampled_per_task, trained.sampled_per_task];
  if (!a || !b || a.length !== b.length) return null;
  const differences = b.map((passes, i) => passes - a[i]);
  return {
    base: base.sampled_pass_rate ?? 0,
    trained: trained.sampled_pass_rate ?? 0,
    upTasks: differences.filter((d) => d > 0).length,
    downTasks: differences.filter((d) => d < 0).length,
    pValue: signFlipExact(differences),
  };
}

function curve(base: Evaluation, sides: Side[], out: string): void {
  const steps = [0, ...(sides[0]?.evals.map((e) => e.step) ?? [])];
  const at = (side: Side, s: number) => (s === 0 ? base : side.evals.find((e) => e.step === s)?.evaluation);
  const series = sides.flatMap((side) => [
    { name: `${side.name}: greedy pass@1`, values: steps.map((s) => at(side, s)?.pass_rate ?? null) },
    { name: `${side.name}: sampled pass@1`, values: steps.map((s) => at(side, s)?.sampled_pass_rate ?? null) },
  ]);
  writeFileSync(
    join(out, 'curve.svg'),
    plotSvg(`held-out pass@1 (${base.submitted_ids.length} tasks), base at step 0`, steps, series),
  );
}

export function report({ settings, base, sides, wall, out }: Input) {
  const rows = sides.map((side) => {
    const last = side.evals[side.evals.length - 1].evaluation;
    const greedy = paired(base, last);
    const sampled = pairedSampled(base, last);
    // Per CPU-hour of training on both cores; the sampled gain where there is one (the less noisy measure).
    const gain = sampled ? sampled.trained - sampled.base : greedy.trained - greedy.base;
    return {
      side: side.name,
      greedy,
      sampled,
      trainSeconds: side.trainSeconds,
      gainPerCpuHour: gain / ((2 * side.trainSeconds) / 3600),
    };
  });
  curve(base, sides, out);
  const cells = (r: (typeof rows)[number]) => {
    const s = r.sampled;
    const g = r.greedy;
    return [
      r.side,
      String(g.heldOut),
      `${pct(g.base)} → ${pct(g.trained)}`,
      `${g.gainedTasks} / ${g.lostTasks}`,
      g.pValue.toPrecision(2),
      s ? `${pct(s.base)} → ${pct(s.trained)}` : '—',
      s ? `${s.upTasks} / ${s.downTasks}` : '—',
      s ? s.pValue.toPrecision(2) : '—',
      `${(r.trainSeconds / 60).toFixed(1)} min`,
      `${(100 * r.gainPerCpuHour).toFixed(1)} points`,
    ];
  };
  const table = [
    '| trainer | held-out | greedy pass@1 | gained / lost | exact McNemar p | sampled pass@1 | up / down | exact sign-flip p | train wall | gain per CPU-hour |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map((r) => `| ${cells(r).join(' | ')} |`),
  ].join('\n');
  const points = sides
    .map((side) => `${side.name}: ${side.evals.map((e) => `step ${e.step} ${pct(e.evaluation.pass_rate)}`).join(', ')}`)
    .join('\n');
  process.stdout.write(`\n${table}\n\n${points}\nwall ${(wall / 60).toFixed(1)} min; plot ${join(out, 'curve.svg')}\n`);
  const curves = sides.map((s) => ({
    ...s,
    evals: s.evals.map((e) => ({
      step: e.step,
      pass_rate: e.evaluation.pass_rate,
      sampled: e.evaluation.sampled_pass_rate,
    })),
  }));
  return { settings, wall, base: { greedy: base.pass_rate, sampled: base.sampled_pass_rate }, rows, curves };
}

export type Row = ReturnType<typeof report>['rows'][number];

const middle = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const h = Math.floor(s.length / 2);
  return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2;
};

type Kept = { settings: { seed: number }; runner: string; row: Row };

/** One line per side and runner over the seeds kept: each seed's sampled gain, wall and gain per CPU-hour, and medians. */
export function seedMedians(kept: Kept[]): string {
  const groups = new Map<string, Kept[]>();
  for (const k of kept)
    groups.set(`${k.row.side} | ${k.runner}`, [...(groups.get(`${k.row.side} | ${k.runner}`) ?? []), k]);
  const gain = (r: Row) => 100 * (r.sampled ? r.sampled.trained - r.sampled.base : r.greedy.trained - r.greedy.base);
  const minutes = (r: Row) => r.trainSeconds / 60;
  const perHour = (r: Row) => 100 * r.gainPerCpuHour;
  const lines = [...groups].map(([name, runs]) => {
    runs.sort((a, b) => a.settings.seed - b.settings.seed);
    const cell = (f: (r: Row) => number) =>
      `${runs.map((k) => f(k.row).toFixed(1)).join(', ')} (median ${middle(runs.map((k) => f(k.row))).toFixed(1)})`;
    return `| ${name} | ${runs.map((k) => k.settings.seed).join(', ')} | ${cell(gain)} | ${cell(minutes)} | ${cell(perHour)} |`;
  });
  const head = '| trainer | runner | seeds | sampled gain, points | train wall, min | gain per CPU-hour |';
  return `\n${head}\n|---|---|---|---|---|---|\n${lines.join('\n')}\n`;
}
