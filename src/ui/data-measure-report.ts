import type { SelectSummary } from '../data/select.js';
import type { ValidateSummary } from '../data/validate.js';
import type { ProbeSummary } from '../eval/run/probe.js';
import { clearedNote } from './data-report.js';
import { table } from './summary.js';

export function renderValidate(s: ValidateSummary, interrupted: boolean): string {
  return (
    `${s.checked} tasks checked: ${s.validated} validated now (${s.seconds.toFixed(1)} s), ` +
    `${s.reused} validated before (--force to redo); ${s.dropped} dropped as invalid-env` +
    (interrupted ? '\ninterrupted: the tasks not validated yet stay kept; run it again to go on' : '') +
    clearedNote(s.cleared) +
    `\n${table(['verdict', 'tasks'], Object.entries(s.byVerdict))}\n` +
    'logs of each grade in .alight/validate/; why a task was dropped: alight data explain <id>\n'
  );
}

export function renderProbe(s: ProbeSummary): string {
  return (
    `probe ${s.run}: ${s.tasks} tasks × ${s.k} attempts\n` +
    `${table(
      ['solved', 'tasks'],
      Object.entries(s.passCounts).sort((a, b) => a[0].localeCompare(b[0], undefined, { numeric: true })),
    )}\n` +
    `next: alight data select --probe ${s.run}\n`
  );
}

export function renderSelect(s: SelectSummary): string {
  return (
    `from probe ${s.run}: ${s.checked} tasks, ${s.kept} kept for training, ${s.heldOut} held out\n` +
    `${table(
      ['band', 'tasks', 'kept'],
      Object.entries(s.bands).map(([b, n]) => [b, n.tasks, n.kept]),
    )}\n${table(
      ['kept: repo', 'tasks'],
      s.repos.map((r) => [r.repo, r.kept]),
    )}\n` +
    'then: alight data export --out train.jsonl (and --held-out --out val.jsonl), or alight train --from-db\n'
  );
}
