import type { CleanSummary, decontaminateTasks, dedupeTasks, ImportSummary } from '../data/pipeline.js';
import type { DataStats, Distribution } from '../data/stats.js';
import type { DataStore } from '../store/data.js';
import type { Probe, Validation } from '../store/data-measures.js';
import { table } from './summary.js';

export type DedupeSummary = ReturnType<typeof dedupeTasks>;
export type DecontaminateSummary = Awaited<ReturnType<typeof decontaminateTasks>>;
export type InvalidRow = { file: string; line: number; reason: string };
/** One imported row of an instance id, with what `alight data validate` and `probe` measured of it. */
export type ExplainedTask = ReturnType<DataStore['explain']>[number] & {
  validation: Validation | null;
  probes: Probe[];
};

/** What a stage cleared by running again: later verdicts (a selection and its hold-out among them) to redo. */
export const clearedNote = (stages: string[]): string =>
  stages.length
    ? `\nthis cleared the verdicts of ${stages.join(', ')}` +
      (stages.includes('select') ? ' (the training selection and its held-out tasks)' : '') +
      `: run ${stages.map((x) => `alight data ${x}`).join(', then ')} again`
    : '';

/** The drops per rule on lines of their own, or nothing when no rule dropped a task. */
const ruleTable = (byRule: Record<string, number>): string =>
  Object.keys(byRule).length ? `\n${table(['rule', 'dropped'], Object.entries(byRule))}` : '';

export function renderImport(s: ImportSummary): string {
  return (
    `${s.files.map((f) => `${f.file}: ${f.rows} rows, ${f.added} new, ${f.invalid} invalid`).join('\n')}\n` +
    `${s.tasks} tasks in the store` +
    (s.invalid ? '; invalid rows: alight data stats (or --json) lists them with file, line and reason' : '') +
    (s.verdictsCleared
      ? '\nnew rows: the earlier clean / dedupe / decontaminate verdicts were cleared; run them again'
      : '')
  );
}

export function renderClean(preset: string, s: CleanSummary): string {
  return (
    `clean (${preset}: ${s.rules.join(', ') || 'no rules'}): ${s.checked} tasks checked, ${s.dropped} dropped` +
    ruleTable(s.byRule) +
    clearedNote(s.cleared)
  );
}

export function renderDedupe(s: DedupeSummary, threshold: number): string {
  return (
    `dedupe: ${s.checked} tasks, ${s.groups} duplicate groups, ${s.dropped} dropped ` +
    `(${s.exactPairs} exact pairs; near: ${s.candidates} LSH candidates with ${s.bands} bands × ${s.rows} rows, ` +
    `${s.nearPairs} verified at Jaccard ≥ ${threshold})${clearedNote(s.cleared)}`
  );
}

export function renderDecontaminate(s: DecontaminateSummary): string {
  return (
    `decontaminate against ${s.referenceIds} reference ids, ${s.referenceRepos} ` +
    `repos${s.referenceRows ? ` and ${s.referenceRows} reference rows` : ''}: ` +
    `${s.checked} tasks checked, ${s.dropped} dropped, ${s.flagged} flagged (statement n-gram overlap)` +
    (s.referenceUnreadable
      ? `\n${s.referenceUnreadable} reference rows could not be ` +
        `read and were not compared (first: ${s.firstUnreadable})`
      : '') +
    ruleTable(s.byRule) +
    clearedNote(s.cleared)
  );
}

/** A table, or what to say when it would be empty. */
const tableOr = (header: string[], rows: (string | number)[][], none: string): string =>
  rows.length ? table(header, rows) : none;

export function renderStats(s: DataStats & { invalid_rows: InvalidRow[] }): string {
  const d = Object.entries(s.distributions).filter((e): e is [string, Distribution] => e[1] !== null);
  return [
    `${s.tasks} tasks, ${s.kept} kept, ${s.invalid} invalid rows`,
    table(
      ['source', 'tasks', 'kept'],
      s.sources.map((x) => [x.source, x.n, x.kept]),
    ),
    tableOr(
      ['stage', 'rule', 'dropped'],
      s.drops.map((x) => [x.stage, x.rule, x.n]),
      'no drops',
    ),
    table(
      ['kept: repo', 'tasks'],
      s.repos.map((x) => [x.repo, x.n]),
    ),
    tableOr(
      ['validated: verdict', 'tasks'],
      s.validations.map((x) => [x.verdict, x.n]),
      'not validated (alight data validate)',
    ),
    tableOr(
      ['probe run', 'k', 'tasks'],
      s.probes.map((x) => [x.run, x.k, x.tasks]),
      'not probed (alight data probe)',
    ),
    table(
      ['kept', 'min', 'p50', 'p90', 'max', 'mean'],
      d.map(([k, v]) => [k, v.min, v.p50, v.p90, v.max, v.mean.toFixed(1)]),
    ),
    ...(s.invalid_rows.length ? [invalidRows(s.invalid, s.invalid_rows)] : []),
  ].join('\n\n');
}

/** The invalid rows listed, and that they are the first ones only when there are more. */
function invalidRows(invalid: number, rows: InvalidRow[]): string {
  return (
    'invalid rows' +
    (invalid > rows.length ? ` (the first ${rows.length} of ${invalid}; --json lists as many)` : '') +
    `:\n${table(
      ['file', 'line', 'reason'],
      rows.map((x) => [x.file, x.line, x.reason.slice(0, 100)]),
    )}`
  );
}

export function renderExplain(instanceId: string, rows: ExplainedTask[]): string {
  return rows
    .map((r) =>
      [
        `${instanceId} from ${r.source} (${r.file}:${r.line}), created ` +
          `${r.created_at ?? 'unknown'}: ${r.drops.length ? 'DROPPED' : 'kept'}`,
        ...r.drops.map((d) => `  ${d.stage} ${d.rule}: ${d.detail}`),
        ...r.groups.map(
          (g) =>
            `  duplicate group ${g.group_id} (${g.kind}): ` +
            g.members.map((m) => `${m.instance_id} [${m.source}]${m.kept ? ' kept' : ''}`).join(', '),
        ),
        ...r.flags.map((f) => `  flag ${f.kind}: ${f.detail}`),
        r.validation
          ? `  validated (${r.validation.grader}, ${r.validation.seconds.toFixed(1)} s): ${r.validation.verdict}` +
            (r.validation.detail ? ` — ${r.validation.detail}` : '')
          : '  not validated',
        ...r.probes.map((p) => `  probe ${p.run}: solved ${p.passes}/${p.k}`),
      ].join('\n'),
    )
    .join('\n');
}

export const renderExported = (written: { file: string; tasks: number }[]): string =>
  written.map((w) => `wrote ${w.tasks} tasks to ${w.file}`).join('\n');
