import { existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { exportTasks } from '../src/data/export.js';
import { cleanTasks, decontaminateTasks, dedupeTasks, importFiles } from '../src/data/pipeline.js';
import { dataStats } from '../src/data/stats.js';
import { AlightError, ExitCode } from '../src/errors.js';
import {
  renderClean,
  renderDecontaminate,
  renderDedupe,
  renderExplain,
  renderExported,
  renderImport,
  renderStats,
} from '../src/ui/data-report.js';
import { progressBars } from '../src/ui/progress-bar.js';
import { printJson, withStore } from './shared.js';
import type {
  CleanFlags,
  DecontaminateFlags,
  DedupeFlags,
  ExportFlags,
  ImportFlags,
  ReportFlags,
} from './table/declared-data.js';

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

// Every data command prints its summary as JSON with --json, as text otherwise; progress bars only for the text.
const say = (o: Pick<ReportFlags, 'json'>, value: unknown, text: () => string): void =>
  o.json ? printJson(value) : void process.stdout.write(`${text()}\n`);
const bars = (o: Pick<ReportFlags, 'json'>) => progressBars(!o.json && Boolean(process.stderr.isTTY));

export async function importCommand(files: string[], o: ImportFlags) {
  return withStore(o, async (store) => {
    const progress = bars(o);
    const s = await importFiles(store, files, o, progress).finally(() => progress.stop());
    say(o, s, () => renderImport(s));
    return s;
  });
}

export async function cleanCommand(o: CleanFlags) {
  return withStore(o, (store) => {
    const { preset, db: _db, json: _json, ...overrides } = o;
    const s = cleanTasks(store, preset, overrides);
    say(o, s, () => renderClean(preset, s));
    return s;
  });
}

export async function dedupeCommand(o: DedupeFlags) {
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
    say(o, s, () => renderDedupe(s, o.threshold));
    return s;
  });
}

export async function decontaminateCommand(o: DecontaminateFlags) {
  if (o.ngram < 1) throw new AlightError(`--ngram must be at least 1, got ${o.ngram}`, ExitCode.usage);
  for (const f of o.against ?? []) readableFile(f, '--against');
  return withStore(o, async (store) => {
    const s = await decontaminateTasks(store, o.against ?? [], {
      keepRepos: Boolean(o.keepRepos),
      ngram: o.ngram,
      builtin: o.builtin,
    });
    say(o, s, () => renderDecontaminate(s));
    return s;
  });
}

export async function statsCommand(o: ReportFlags) {
  return withStore(o, (store) => {
    const invalidRows = store.data.invalidRows();
    // The list is the first rows only: say so, rather than let 20 rows pass for all of them.
    const s = { ...dataStats(store), invalid_rows: invalidRows, invalid_rows_listed: invalidRows.length };
    say(o, s, () => renderStats(s));
    return s;
  });
}

export async function explainCommand(instanceId: string, o: ReportFlags) {
  return withStore(o, (store) => {
    const rows = store.data.explain(instanceId).map((r) => ({
      ...r,
      validation: store.measures.validation(r.uid) ?? null,
      probes: store.measures.probesFor(r.uid),
    }));
    if (rows.length === 0)
      throw new AlightError(`no task ${instanceId} was imported (alight data stats)`, ExitCode.input);
    say(o, rows, () => renderExplain(instanceId, rows));
    return rows;
  });
}

export async function exportCommand(o: ExportFlags) {
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
    say(o, written, () => renderExported(written));
    return written;
  });
}
