import { existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { exportTasks } from '../src/data/export.js';
import { cleanTasks, decontaminateTasks, dedupeTasks, importFiles } from '../src/data/pipeline.js';
import type { Preset, RuleOptions } from '../src/data/rules.js';
import { type DataStats, dataStats } from '../src/data/stats.js';
import type { ExportFormat, Format } from '../src/data/task.js';
import { AlightError, ExitCode } from '../src/errors.js';
import { progressBars } from '../src/ui/progress-bar.js';
import { table } from '../src/ui/summary.js';
import { printJson, withStore } from './shared.js';

const maxPerms = 2048;

function readableFile(file: string, flag: string): void {
  if (!existsSync(file)) throw new AlightError(`${flag} ${file}: no such file`, ExitCode.input);
  if (statSync(file).isDirectory()) throw new AlightError(`${flag} ${file} is a folder, not a file`, ExitCode.input);
}

function writableFile(file: string, flag: string): void {
  const folder = dirname(resolve(file));
  if (!existsSync(folder) || !statSync(folder).isDirectory())
    throw new AlightError(`${flag} ${file}: the folder ${folder} does not exist`, ExitCode.input);
  if (existsSync(file) && statSync(file).isDirectory())
    throw new AlightError(`${flag} ${file} is a folder, not a file`, ExitCode.input);
}

interface Common {
  db?: string;
  json?: boolean;
}
/** What a stage cleared by running again: later verdicts (a selection and its hold-out among them) to redo. */
export const clearedNote = (stages: string[]): string =>
  stages.length
    ? `\nthis cleared the verdicts of ${stages.join(', ')}` +
      (stages.includes('select') ? ' (the training selection and its held-out tasks)' : '') +
      `: run ${stages.map((x) => `alight data ${x}`).join(', then ')} again`
    : '';

const say = (o: Common, value: unknown, text: () => string): void =>
  o.json ? printJson(value) : void process.stdout.write(`${text()}\n`);
const bars = (o: Common) => progressBars(!o.json && Boolean(process.stderr.isTTY));

export async function importCommand(files: string[], o: Common & { source?: string; format: Format | 'auto' }) {
  return withStore(o, async (store) => {
    const progress = bars(o);
    const s = await importFiles(store, files, o, progress).finally(() => progress.stop());
    say(
      o,
      s,
      () =>
        `${s.files.map((f) => `${f.file}: ${f.rows} rows, ${f.added} new, ${f.invalid} invalid`).join('\n')}\n` +
        `${s.tasks} tasks in the store` +
        (s.invalid ? '; invalid rows: alight data stats (or --json) lists them with file, line and reason' : '') +
        (s.verdictsCleared
          ? '\nnew rows: the earlier clean / dedupe / decontaminate verdicts were cleared; run them again'
          : ''),
    );
    return s;
  });
}

export async function cleanCommand(o: Common & { preset: Preset } & Partial<RuleOptions>) {
  return withStore(o, (store) => {
    const { preset, db: _db, json: _json, ...overrides } = o;
    const s = cleanTasks(store, preset, overrides);
    say(
      o,
      s,
      () =>
        `clean (${preset}: ${s.rules.join(', ') || 'no rules'}): ${s.checked} tasks checked, ${s.dropped} dropped` +
        (Object.keys(s.byRule).length ? `\n${table(['rule', 'dropped'], Object.entries(s.byRule))}` : '') +
        clearedNote(s.cleared),
    );
    return s;
  });
}

export async function dedupeCommand(o: Common & { threshold: number; perms: number; shingle: number; near: boolean }) {
  if (!(o.threshold > 0 && o.threshold <= 1))
    throw new AlightError(`--threshold must be in (0, 1], got ${o.threshold}`, ExitCode.usage);
  if (o.perms < 1 || o.shingle < 1) throw new AlightError('--perms and --shingle must be at least 1', ExitCode.usage);
  // Choosing bands and rows costs perms² steps, and past a few hundred permutations the estimate gains nothing.
  if (o.perms > maxPerms)
    throw new AlightError(
      `--perms must be at most ${maxPerms} (128 is datasketch's default), got ${o.perms}`,
      ExitCode.usage,
    );
  return withStore(o, (store) => {
    const progress = bars(o);
    const s = (() => {
      try {
        return dedupeTasks(store, o, progress);
      } finally {
        progress.stop();
      }
    })();
    say(
      o,
      s,
      () =>
        `dedupe: ${s.checked} tasks, ${s.groups} duplicate groups, ${s.dropped} dropped ` +
        `(${s.exactPairs} exact pairs; near: ${s.candidates} LSH candidates with ${s.bands} bands × ${s.rows} rows, ` +
        `${s.nearPairs} verified at Jaccard ≥ ${o.threshold})${clearedNote(s.cleared)}`,
    );
    return s;
  });
}

export async function decontaminateCommand(
  o: Common & { against?: string[]; keepRepos?: boolean; ngram: number; builtin: boolean },
) {
  if (o.ngram < 1) throw new AlightError(`--ngram must be at least 1, got ${o.ngram}`, ExitCode.usage);
  for (const f of o.against ?? []) readableFile(f, '--against');
  return withStore(o, async (store) => {
    const s = await decontaminateTasks(store, o.against ?? [], {
      keepRepos: Boolean(o.keepRepos),
      ngram: o.ngram,
      builtin: o.builtin,
    });
    say(
      o,
      s,
      () =>
        `decontaminate against ${s.referenceIds} reference ids, ${s.referenceRepos} ` +
        `repos${s.referenceRows ? ` and ${s.referenceRows} reference rows` : ''}: ` +
        `${s.checked} tasks checked, ${s.dropped} dropped, ${s.flagged} flagged (statement n-gram overlap)` +
        (s.referenceUnreadable
          ? `\n${s.referenceUnreadable} reference rows could not be ` +
            `read and were not compared (first: ${s.firstUnreadable})`
          : '') +
        (Object.keys(s.byRule).length ? `\n${table(['rule', 'dropped'], Object.entries(s.byRule))}` : '') +
        clearedNote(s.cleared),
    );
    return s;
  });
}

export async function statsCommand(o: Common) {
  return withStore(o, (store) => {
    const invalidRows = store.data.invalidRows();
    // The list is the first rows only: say so, rather than let 20 rows pass for all of them.
    const s = { ...dataStats(store), invalid_rows: invalidRows, invalid_rows_listed: invalidRows.length };
    say(o, s, () => renderStats(s));
    return s;
  });
}

/** A table, or what to say when it would be empty. */
const tableOr = (header: string[], rows: (string | number)[][], none: string): string =>
  rows.length ? table(header, rows) : none;

function renderStats(s: DataStats & { invalid_rows: { file: string; line: number; reason: string }[] }): string {
  const d = Object.entries(s.distributions).filter(([, v]) => v !== null) as [
    string,
    NonNullable<(typeof s.distributions)[keyof typeof s.distributions]>,
  ][];
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
    ...(s.invalid_rows.length
      ? [
          'invalid rows' +
            (s.invalid > s.invalid_rows.length
              ? ` (the first ${s.invalid_rows.length} of ${s.invalid}; --json lists as many)`
              : '') +
            `:\n${table(
              ['file', 'line', 'reason'],
              s.invalid_rows.map((x) => [x.file, x.line, x.reason.slice(0, 100)]),
            )}`,
        ]
      : []),
  ].join('\n\n');
}

export async function explainCommand(instanceId: string, o: Common) {
  return withStore(o, (store) => {
    const rows = store.data.explain(instanceId).map((r) => ({
      ...r,
      validation: store.measures.validation(r.uid) ?? null,
      probes: store.measures.probesFor(r.uid),
    }));
    if (rows.length === 0)
      throw new AlightError(`no task ${instanceId} was imported (alight data stats)`, ExitCode.input);
    say(o, rows, () =>
      rows
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
        .join('\n'),
    );
    return rows;
  });
}

export async function exportCommand(
  o: Common & { out: string; format: ExportFormat; split?: string; seed: number; heldOut?: boolean },
) {
  writableFile(o.out, '--out');
  return withStore(o, async (store) => {
    // --held-out: the validation tasks `data select --val` set aside, instead of the kept (training) ones.
    const each = () => (o.heldOut ? store.data.eachHeldOut() : store.data.eachKeptTask());
    const count = o.heldOut ? [...each()].length : store.data.keptCount();
    if (count === 0)
      throw new AlightError(
        o.heldOut ? 'no held-out tasks (alight data select --val N)' : 'no kept tasks to export (alight data stats)',
        ExitCode.input,
      );
    const written = await exportTasks({ count, each }, o);
    say(o, written, () => written.map((w) => `wrote ${w.tasks} tasks to ${w.file}`).join('\n'));
    return written;
  });
}
