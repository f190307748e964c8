// bench:learn's numbers: paired tests of each trained checkpoint against the base model, the held-out curve as an
// SVG, and the table for bench/BENCHMARKS.md. Pure over the evaluations; the one write is the plot.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { compareRuns } from '../../src/eval/compare.js';
import { plotSvg } from '../../src/ui/plot.js';

/** bench/learn/evaluate.py's summary of one model on the held-out split. */
export interface Evaluation {
  model: string;
  submitted_ids: string[];
  resolved_ids: string[];
  pass_rate: number;
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

/** The last checkpoint of a side against the base: pass rates, the discordant pairs and the exact McNemar p. */
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

export function report({ settings, base, sides, wall, out }: Input) {
  const rows = sides.map((side) => {
    const last = side.evals[side.evals.length - 1].evaluation;
    const p = paired(base, last);
    const gain = p.trained - p.base;
    return {
      side: side.name,
      ...p,
      gain,
      trainSeconds: side.trainSeconds,
      gainPerCpuHour: gain / ((2 * side.trainSeconds) / 3600),
    };
  });
  const steps = [0, ...(sides[0]?.evals.map((e) => e.step) ?? [])];
  const svg = plotSvg(
    `held-out greedy pass@1 (${base.submitted_ids.length} tasks), base at step 0`,
    steps,
    sides.map((side) => ({
      name: `${side.name}: held-out pass@1`,
      values: steps.map((s) =>
        s === 0 ? base.pass_rate : (side.evals.find((e) => e.step === s)?.evaluation.pass_rate ?? null),
      ),
    })),
  );
  writeFileSync(join(out, 'curve.svg'), svg);
  const table = [
    '| trainer | held-out | base | trained | gained / lost tasks | exact McNemar p | train wall | gain per CPU-hour |',
    '|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.side} | ${r.heldOut} | ${pct(r.base)} | ${pct(r.trained)} | ${r.gainedTasks} / ${r.lostTasks} | ` +
        `${r.pValue.toPrecision(2)} | ${(r.trainSeconds / 60).toFixed(1)} min | ${(100 * r.gainPerCpuHour).toFixed(1)} points |`,
    ),
  ].join('\n');
  const curve = sides
    .map((side) => `${side.name}: ${side.evals.map((e) => `step ${e.step} ${pct(e.evaluation.pass_rate)}`).join(', ')}`)
    .join('\n');
  process.stdout.write(`\n${table}\n\n${curve}\nwall ${(wall / 60).toFixed(1)} min; plot ${join(out, 'curve.svg')}\n`);
  const curves = sides.map((s) => ({
    ...s,
    evals: s.evals.map((e) => ({ step: e.step, pass_rate: e.evaluation.pass_rate })),
  }));
  return { settings, wall, base: base.pass_rate, rows, curves };
}
