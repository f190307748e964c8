/**
 * On-policy distillation against RL on the demo's task (examples/vowels, the seed-made tiny model): the demo's own RL
 * run is the teacher; a fresh copy of the same initial model distils from its last checkpoint with `--task-reward off`,
 * the other settings the same (n 8, 4 tasks a step, lr 0.01, seed 0). Prints, step by step, each run's reward and the
 * student's KL to the teacher, the step at which each reaches the teacher's reward less 0.1 (3-step running mean),
 * and the time a step takes. The suite checks the mechanics on a 6 + 5-step version (test/e2e/distill.test.ts).
 *
 *   npm run bench:distill    # BENCH_DISTILL_RL_STEPS (30), BENCH_DISTILL_STEPS (15); ~6 min on 2 cores
 */
import { join } from 'node:path';
import { runEntry } from '../commands/index.js';
import { mean } from '../src/algo/stats.js';
import { tempDir } from '../test/helpers/gateway.js';
import { tinyModel } from '../test/helpers/tiny-model.js';
import { bin, median, root, runSteps, step } from './learn/common.js';

const rlSteps = Number(process.env.BENCH_DISTILL_RL_STEPS ?? 30);
const studentSteps = Number(process.env.BENCH_DISTILL_STEPS ?? 15);
const settings = ['--tasks', join(root, 'examples/vowels/tasks.jsonl'), '-n', '8', '--batch-size', '4'];
settings.push('--lr', '0.01', '--seed', '0');
const harness = ['--', 'node', join(root, 'examples/vowels/harness.mjs')];

type Metrics = Record<string, number | null>;

/** `alight train` in `dir` as run `name`, its progress on this terminal; its steps' metrics. */
async function train(dir: string, name: string, flags: string[]): Promise<Metrics[]> {
  await step(process.execPath, [bin, 'train', ...settings, '--run', name, ...flags, ...harness], dir);
  return runSteps(dir, name).map((s) => s.metrics);
}

/** The first step whose 3-step running mean reaches `target`, or null. */
const reached = (xs: number[], target: number): number | null => {
  const i = xs.findIndex((_, k) => k >= 2 && mean(xs.slice(k - 2, k + 1))! >= target);
  return i < 0 ? null : i;
};
const fixed = (x: number | null | undefined, digits = 2): string => (x == null ? '' : x.toFixed(digits));

function report(rl: Metrics[], student: Metrics[]): string {
  const rewards = (m: Metrics[]) => m.map((s) => s.reward_mean as number);
  const teacher = mean(rewards(rl).slice(-5))!;
  const row = (label: string, m: Metrics[], key: string) =>
    `| ${label} | ${m
      .slice(0, student.length)
      .map((s) => fixed(s[key]))
      .join(' | ')} |`;
  const lines = [`| step | ${student.map((_, i) => i).join(' | ')} |`, `|---|${student.map(() => '--:').join('|')}|`];
  lines.push(row('RL alone, reward', rl, 'reward_mean'), row('distilled, reward', student, 'reward_mean'));
  lines.push(row('distilled, teacher KL (nats a token)', student, 'teacher_kl'));
  const target = teacher - 0.1;
  const stepTime = (m: Metrics[]) => median(m.map((s) => s.step_s as number));
  return [
    ...lines,
    '',
    `- Teacher (RL's last 5 steps): ${fixed(teacher)}; teacher − 0.1 (3-step running mean) reached at step ` +
      `${reached(rewards(student), target) ?? 'never'} distilled, ${reached(rewards(rl), target) ?? 'never'} by RL.`,
    `- A step: ${fixed(stepTime(student), 1)} s distilled (the teacher's scoring ` +
      `${fixed(median(student.map((s) => s.teacher_score_s as number)), 2)} s of it), ${fixed(stepTime(rl), 1)} s RL.`,
  ].join('\n');
}

await runEntry(async () => {
  const dir = tempDir('alight-bench-distill-');
  const model = tinyModel(0);
  const rl = await train(dir, 'rl', ['--model', model, '--steps', String(rlSteps)]);
  const checkpoint = join(dir, '.alight', 'runs', 'rl', 'checkpoints', `step-${rlSteps - 1}`);
  const flags = ['--model', model, '--steps', String(studentSteps), '--teacher', checkpoint, '--task-reward', 'off'];
  const student = await train(dir, 'student', flags);
  console.log(`\n## On-policy distillation against RL — ${new Date().toISOString().slice(0, 10)}\n`);
  console.log(`The demo's task and model, RL ${rlSteps} steps, distilled ${studentSteps}; run in ${dir}.\n`);
  console.log(report(rl, student));
});
