import type { InstanceReport } from '../eval/grade/grade-types.js';
import type { Comparison } from '../eval/run/compare.js';
import { type GradeSummary, wilson } from '../eval/run/grade-run.js';
import { type AttemptResult, type EvalResult, passAtK } from '../eval/run/swebench-run.js';
import type { RejudgeSummary } from '../rewards/rejudge.js';
import { table } from './summary.js';

const percent = (x: number): string => (x * 100).toFixed(1);
/** A 95% confidence interval of a resolved rate, in percent. */
const interval = ([lo, hi]: [number, number]): string => `${percent(lo)}–${percent(hi)}%`;

/** F2P and P2P: the tests that passed of each kind, out of all of that kind. */
function testCounts(r: InstanceReport): string {
  if (!r.tests_status) return '–';
  const { FAIL_TO_PASS: f2p, PASS_TO_PASS: p2p } = r.tests_status;
  return (
    `F2P ${f2p.success.length}/${f2p.success.length + f2p.failure.length}, ` +
    `P2P ${p2p.success.length}/${p2p.success.length + p2p.failure.length}`
  );
}

/** `alight eval grade`: each prediction's grade, the resolved rate and where the official reports went. */
export function renderGrade(reports: InstanceReport[], summary: GradeSummary, out: string): string {
  const resolved = summary.resolved_instances;
  const submitted = summary.submitted_instances;
  return (
    `${table(
      ['instance', 'status', 'flags', 'detail'],
      reports.map((r) => [
        r.instance_id,
        r.status,
        r.guard.map((g) => `${g.file}${g.removed ? ' (removed)' : ''}`).join(', ') || '–',
        r.error ?? testCounts(r),
      ]),
    )}\n` +
    '\n' +
    `resolved ${resolved}/${submitted} ` +
    `(${percent(resolved / submitted)}%, 95% CI ${interval(wilson(resolved, submitted))}); unresolved ` +
    `${summary.unresolved_instances}, empty ${summary.empty_patch_instances}, ` +
    `error ${summary.error_instances}, incomplete ${summary.incomplete_ids.length}\nreports in ${out}\n`
  );
}

/** The first attempts per repository (an instance id less its number): how many, and how many resolved. */
function repoTable(first: AttemptResult[]): string {
  const byRepo = new Map<string, { n: number; resolved: number }>();
  for (const a of first) {
    const repo = a.instance_id.replace(/-\d+$/, '');
    const e = byRepo.get(repo) ?? { n: 0, resolved: 0 };
    e.n++;
    if (a.report.status === 'resolved') e.resolved++;
    byRepo.set(repo, e);
  }
  return table(
    ['repo', 'instances', 'resolved'],
    [...byRepo].map(([repo, e]) => [repo, e.n, e.resolved]),
  );
}

/** `alight eval swebench`: every attempt, the first attempts per repo, the resolved rate (and pass@k for k > 1). */
export function renderEval(r: EvalResult, k: number): string {
  const first = r.attempts.filter((a) => a.attempt === 0);
  const n = first.length;
  const resolved = first.filter((a) => a.report.status === 'resolved').length;
  const correct = [...new Set(r.attempts.map((a) => a.instance_id))].map(
    (id) => r.attempts.filter((a) => a.instance_id === id && a.report.status === 'resolved').length,
  );
  return [
    table(
      ['instance', 'attempt', 'status', 'calls', 'tokens', 'seconds', 'flags / reason'],
      r.attempts.map((a) => [
        a.instance_id,
        a.attempt,
        a.report.status,
        a.rollout.calls,
        a.rollout.prompt_tokens + a.rollout.completion_tokens,
        a.seconds?.toFixed(1) ?? '–',
        [a.report.guard.map((g) => g.file).join(', '), a.report.error ?? ''].filter(Boolean).join('; ') || '–',
      ]),
    ),
    '',
    repoTable(first),
    '',
    `resolved ${resolved}/${n} = ${percent(resolved / Math.max(n, 1))}% ` +
      `(95% Wilson interval ${interval(wilson(resolved, n))})` +
      (k > 1 ? `; pass@${k} ${percent(passAtK(correct, k, k))}%, ` + `pass@1 ${percent(passAtK(correct, k, 1))}%` : ''),
    'statuses: ' +
      ['resolved', 'unresolved', 'empty_patch', 'error']
        .map((s) => `${s} ${first.filter((a) => a.report.status === s).length}`)
        .join(', '),
    `files in ${r.out} (predictions.jsonl, summary.json, reports/); traces: alight traces list --run ${r.run}`,
  ].join('\n');
}

/** `alight eval compare A B`: the instances each resolved and whether the difference is significant. */
export function renderCompare(c: Comparison, a: string, b: string): string {
  return (
    `${c.common} instances in both: both resolved ${c.bothResolved}, ` +
    `only ${a} ${c.onlyA.length}, only ${b} ${c.onlyB.length}, ` +
    `neither ${c.neither}\nexact McNemar p = ${c.pValue.toPrecision(3)}` +
    (c.pValue < 0.05 ? ' (a difference at the 5% level)' : ' (no significant difference)') +
    '\n' +
    (c.onlyA.length ? `only ${a}: ${c.onlyA.join(', ')}\n` : '') +
    (c.onlyB.length ? `only ${b}: ${c.onlyB.join(', ')}\n` : '')
  );
}

const fixed = (x: number | null, digits = 3): string => (x === null ? '—' : x.toFixed(digits));

/** `alight eval judge <run>`: the judge's scores and, beside a verifiable reward, how the two agree. */
export function renderRejudge(s: RejudgeSummary): string {
  const m = s.metrics;
  const lines = [
    `run ${s.run}: ${s.judged} of ${s.rollouts} rollouts judged, ${s.failed} judge-failed; ` +
      `mean judge score ${fixed(s.judgeMean)}`,
    `${m.judge_calls} judge calls, ${m.judge_cached_groups} groups from the cache, ${m.judge_tokens} tokens`,
  ];
  if (s.verifiable)
    lines.push(
      `beside the verifiable reward (${s.verifiable.rollouts} rollouts, mean ${fixed(s.verifiable.mean)}): ` +
        `Pearson r ${fixed(s.verifiable.pearson)}`,
    );
  lines.push(`scores: alight traces show <rollout> (the judge's explanation with each)`);
  return `${lines.join('\n')}\n`;
}
