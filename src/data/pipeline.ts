import { basename, resolve } from 'node:path';
import { AlightError, ExitCode } from '../errors.js';
import type { DataStage, Drop } from '../store/data.js';
import type { Store } from '../store/store.js';
import { addReference, decontaminate, emptyReference } from './decontaminate.js';
import { type DedupeResult, dedupe } from './dedupe.js';
import { defaultMinHash, type MinHashOptions } from './minhash.js';
import { checkDataFile, readRows } from './read.js';
import { breaches, defaultRuleOptions, type Preset, presets, type RuleName, type RuleOptions } from './rules.js';
import { type DataTask, type Format, parseTask, toSweBenchRow } from './task.js';
import { verified } from './verified.js';

/** Progress of a long data step: `total` null while unknown (a streamed file). */
export type DataProgress = (event: { stage: string; done: number; total: number | null }) => void;

export interface ImportSummary {
  files: { file: string; rows: number; added: number; invalid: number }[];
  added: number;
  invalid: number;
  tasks: number;
  verdictsCleared: boolean;
}

/**
 * `alight data import`: every row validated; valid rows stored (again: no change), invalid ones kept aside with the
 * reason. All or nothing: the files are checked first and everything is one transaction, so an error or Ctrl-C part
 * way leaves the store as it was. New rows clear the stages' verdicts, which must be recomputed.
 */
export async function importFiles(
  store: Store,
  files: string[],
  o: { source?: string; format: Format | 'auto' },
  progress?: DataProgress,
): Promise<ImportSummary> {
  const paths = files.map((f) => resolve(f));
  for (const p of paths) checkDataFile(p);
  const summary: ImportSummary = { files: [], added: 0, invalid: 0, tasks: 0, verdictsCleared: false };
  await store.data
    .atomically(async () => {
      for (const file of paths) {
        store.data.forgetInvalid(file);
        const per = await importFile(store, file, o, progress);
        summary.files.push(per);
        summary.added += per.added;
        summary.invalid += per.invalid;
      }
      if (summary.added > 0 && store.data.hasVerdicts()) {
        store.data.clearVerdicts();
        summary.verdictsCleared = true;
      }
    })
    .catch((err) => {
      // The error names one file of several, some perhaps read already: say that the store is as it was.
      throw err instanceof AlightError ? new AlightError(`${err.message}; nothing was imported`, err.exitCode) : err;
    });
  summary.tasks = store.data.counts().tasks;
  return summary;
}

async function importFile(
  store: Store,
  file: string,
  o: { source?: string; format: Format | 'auto' },
  progress?: DataProgress,
) {
  const source = o.source ?? basename(file).replace(/\.(jsonl|json|parquet)$/i, '');
  const per = { file, rows: 0, added: 0, invalid: 0 };
  let tasks: DataTask[] = [];
  let invalid: { file: string; line: number; reason: string }[] = [];
  const flush = (): void => {
    per.added += store.data.addTasks(tasks, invalid);
    tasks = [];
    invalid = [];
    progress?.({ stage: `import ${basename(file)}`, done: per.rows, total: null });
  };
  for await (const item of readRows(file)) {
    per.rows++;
    if ('error' in item) {
      per.invalid++;
      invalid.push({ file, line: item.line, reason: item.error });
    } else {
      const parsed = parseTask(item.row, { source, format: o.format, file, line: item.line });
      if (parsed.ok) tasks.push(parsed.task);
      else {
        per.invalid++;
        invalid.push({ file, line: item.line, reason: parsed.reason });
      }
    }
    if (tasks.length + invalid.length >= 1000) flush();
  }
  flush();
  return per;
}

export interface CleanSummary {
  checked: number;
  /** Later stages whose verdicts this cleared: they must run again. */
  cleared: DataStage[];
  dropped: number;
  byRule: Record<string, number>;
  rules: RuleName[];
}

/**
 * `alight data clean`: the preset's rules (and those flags turn on) over every imported task; replaces the last clean.
 */
export function cleanTasks(store: Store, preset: Preset, overrides: Partial<RuleOptions>): CleanSummary {
  const o = { ...defaultRuleOptions, ...overrides };
  const names: RuleName[] = presets[preset].filter((r) => r !== 'missing-env' || o.requireEnv);
  const drops: Drop[] = [];
  let checked = 0;
  for (const t of store.data.ruleInputs()) {
    checked++;
    for (const b of breaches(t, names, o)) drops.push({ uid: t.uid, ...b });
  }
  const cleared = store.data.setStage('clean', drops);
  const byRule: Record<string, number> = {};
  for (const d of drops) byRule[d.rule] = (byRule[d.rule] ?? 0) + 1;
  return { checked, dropped: new Set(drops.map((d) => d.uid)).size, byRule, rules: names, cleared };
}

/** `alight data dedupe`: over the tasks clean kept; replaces the last dedupe. */
export function dedupeTasks(
  store: Store,
  o: Partial<MinHashOptions> & { near: boolean },
  progress?: DataProgress,
): Omit<DedupeResult, 'drops' | 'groups'> & { dropped: number; groups: number; cleared: DataStage[] } {
  const result = dedupe(store.data.dedupeSource(), { ...defaultMinHash, ...o }, (done, total) =>
    progress?.({ stage: 'minhash', done, total }),
  );
  const cleared = store.data.setStage('dedupe', result.drops, result.groups);
  const { drops, groups, ...numbers } = result;
  return { ...numbers, dropped: drops.length, groups: groups.length, cleared };
}

/**
 * `alight data decontaminate`: against the shipped SWE-bench Verified list and any reference files; replaces the last
 * run.
 */
export async function decontaminateTasks(
  store: Store,
  against: string[],
  o: { keepRepos: boolean; ngram: number; builtin: boolean },
) {
  if (!o.builtin && against.length === 0)
    throw new AlightError(
      'nothing to decontaminate against: pass --against <file…> or leave the built-in SWE-bench Verified list on',
      ExitCode.usage,
    );
  const ref = emptyReference();
  if (o.builtin) {
    for (const id of verified.ids) ref.ids.add(id);
    for (const repo of verified.repos) ref.repos.add(repo);
  }
  let referenceRows = 0;
  // A reference row that cannot be read is counted and named, not silently left out of the comparison.
  const unreadable: string[] = [];
  for (const file of against) {
    for await (const item of readRows(file)) {
      if ('error' in item) unreadable.push(`${file}:${item.line}: ${item.error}`);
      else if (typeof item.row === 'object' && item.row !== null) {
        addReference(ref, item.row as Record<string, unknown>, o.ngram);
        referenceRows++;
      }
    }
  }
  let checked = 0;
  const { drops, flags } = decontaminate(
    (function* () {
      for (const t of store.data.eachKeptTask('decontaminate')) {
        checked++;
        yield t;
      }
    })(),
    ref,
    o,
  );
  const cleared = store.data.setStage('decontaminate', drops, [], flags);
  const byRule: Record<string, number> = {};
  for (const d of drops) byRule[d.rule] = (byRule[d.rule] ?? 0) + 1;
  return {
    checked,
    referenceRows,
    referenceUnreadable: unreadable.length,
    firstUnreadable: unreadable[0] ?? null,
    referenceIds: ref.ids.size,
    referenceRepos: ref.repos.size,
    dropped: drops.length,
    byRule,
    flagged: flags.length,
    cleared,
  };
}

/**
 * The kept tasks (or those kept before stage `before`) as training tasks (`alight train --from-db`): each in
 * SWE-bench's columns, named by its instance id.
 */
export function keptAsTasks(store: Store, before?: DataStage): { id: string; data: Record<string, unknown> }[] {
  const tasks = [...store.data.eachKeptTask(before)];
  if (tasks.length === 0)
    throw new AlightError(`no kept tasks in ${store.path}: import some with alight data import`, ExitCode.input);
  const seen = new Set<string>();
  for (const t of tasks) {
    if (seen.has(t.instance_id))
      throw new AlightError(`instance id ${t.instance_id} is kept twice: run alight data dedupe first`, ExitCode.input);
    seen.add(t.instance_id);
  }
  return tasks.map((t) => ({ id: t.instance_id, data: toSweBenchRow(t) }));
}
