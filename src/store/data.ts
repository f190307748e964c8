import type Database from 'better-sqlite3';
import type { DataTask } from '../data/task.js';

export type DataStage = 'clean' | 'dedupe' | 'decontaminate' | 'validate' | 'select';
export interface Drop {
  uid: string;
  rule: string;
  detail: string;
}
export interface Group {
  group_id: string;
  kind: string;
  members: { uid: string; kept: boolean }[];
}

// What dedupe (src/data/dedupe.ts) reads from the store: declared here, below both, so that neither imports the other.
export type ExactKey = 'instance-id' | 'patch' | 'repo-commit-patch' | 'statement';

/** What of a task a duplicate group reports (its kept member chosen by age). */
export interface DedupeFacts {
  uid: string;
  instance_id: string;
  source: string;
  created_at: string | null;
  seq: number;
}

/**
 * The tasks dedupe judges, read as it goes (the store streams them: a million tasks are never in memory at once).
 * Tasks are named by `seq` (import order).
 */
export interface DedupeSource {
  /** Every task's seq, ascending. */
  seqs(): Int32Array;
  /** Tasks that have `key` (`statement`: a non-empty one), sorted by it, then by seq. */
  byKey(key: ExactKey): Iterable<{ seq: number; key: string }>;
  /** Every task's statement, in seq order. */
  statements(): Iterable<{ seq: number; statement: string }>;
  statementOf(seq: number): string;
  factsOf(seq: number): DedupeFacts;
}

/** The numbers the cleaning rules and dedupe look at, without the texts. */
export type TaskFacts = Pick<
  DataTask,
  | 'uid'
  | 'instance_id'
  | 'source'
  | 'repo'
  | 'base_commit'
  | 'created_at'
  | 'n_files'
  | 'n_source_files'
  | 'n_hunks'
  | 'n_lines'
  | 'n_source_lines'
  | 'patch_bytes'
  | 'n_f2p'
  | 'n_p2p'
  | 'ps_chars'
  | 'ps_words'
  | 'patch_sha'
  | 'ps_sha'
> & { seq: number };

const factColumns =
  'uid, instance_id, source, repo, base_commit, created_at, ' +
  'n_files, n_source_files, n_hunks, n_lines, n_source_lines, ' +
  'patch_bytes, n_f2p, n_p2p, ps_chars, ps_words, patch_sha, ps_sha, seq';
const statColumns = ['n_lines', 'n_files', 'n_f2p', 'n_p2p', 'ps_words'] as const;
type StatColumn = (typeof statColumns)[number];
export const dataStages: DataStage[] = ['clean', 'dedupe', 'decontaminate', 'validate', 'select'];
const kept = 'NOT EXISTS (SELECT 1 FROM data_drops d WHERE d.uid = t.uid)';
/** What a stage works on: the tasks no earlier stage dropped (clean sees them all). */
const keptBefore = (stage: DataStage): string => {
  const earlier = dataStages.slice(0, dataStages.indexOf(stage)).map((s) => `'${s}'`);
  return earlier.length
    ? `NOT EXISTS (SELECT 1 FROM data_drops d WHERE d.uid = t.uid AND d.stage IN (${earlier.join(', ')}))`
    : '1';
};

/** The SQL of `alight data`: imported tasks, invalid rows, drops per stage, duplicate groups and flags. */
export class DataStore {
  private readonly insert: Database.Statement;
  private readonly invalid: Database.Statement;
  /** Import order, which breaks ties between equally old duplicates. */
  private nextSeq: number | null = null;

  constructor(private readonly db: Database.Database) {
    this.insert = db.prepare(
      `INSERT OR IGNORE INTO data_tasks (uid, instance_id, source, repo, base_commit, created_at, task, n_files,
        n_source_files, n_hunks, n_lines, n_source_lines, patch_bytes, n_f2p, n_p2p, ps_chars, ps_words, ` +
        `patch_sha, ps_sha, file, line, seq)
      VALUES (@uid, @instance_id, @source, @repo, @base_commit, @created_at, @task, @n_files, @n_source_files, ` +
        `@n_hunks, @n_lines, @n_source_lines,
        @patch_bytes, @n_f2p, @n_p2p, @ps_chars, @ps_words, @patch_sha, @ps_sha, @file, @line, @seq)`,
    );
    this.invalid = db.prepare('INSERT OR REPLACE INTO data_invalid (file, line, reason) VALUES (?, ?, ?)');
  }

  /**
   * Adds a batch of rows in one transaction; a row seen before (same uid) is left as it was. Returns the rows added.
   */
  addTasks(tasks: DataTask[], invalid: { file: string; line: number; reason: string }[]): number {
    this.nextSeq ??= (
      this.db.prepare('SELECT coalesce(max(seq), 0) + 1 AS n FROM data_tasks').get() as { n: number }
    ).n;
    return this.db.transaction(() => {
      let added = 0;
      for (const t of tasks) {
        const changes = this.insert.run({ ...t, task: JSON.stringify(t), seq: this.nextSeq }).changes;
        this.nextSeq! += changes;
        added += changes;
      }
      for (const i of invalid) this.invalid.run(i.file, i.line, i.reason);
      return added;
    })();
  }

  /** What dedupe reads, streamed from the tasks dedupe works on (dedupe.ts). */
  dedupeSource(): DedupeSource {
    const where = keptBefore('dedupe');
    const keyExpr: Record<ExactKey, string> = {
      'instance-id': 'instance_id',
      patch: 'CASE WHEN patch_bytes > 0 THEN patch_sha END',
      'repo-commit-patch':
        "CASE WHEN patch_bytes > 0 AND coalesce(base_commit, '') != '' " +
        "THEN repo || '@' || base_commit || ':' || patch_sha END",
      statement: 'CASE WHEN ps_words > 0 THEN ps_sha END',
    };
    const statementOf = this.db
      .prepare("SELECT json_extract(task, '$.problem_statement') FROM data_tasks WHERE seq = ?")
      .pluck();
    const factsOf = this.db.prepare('SELECT uid, instance_id, source, created_at, seq FROM data_tasks WHERE seq = ?');
    return {
      seqs: () =>
        Int32Array.from(
          this.db
            .prepare(`SELECT seq FROM data_tasks t WHERE ${where} ORDER BY seq`)
            .pluck()
            .iterate() as Iterable<number>,
        ),
      byKey: (key) =>
        this.db
          .prepare(
            `SELECT seq, k AS key FROM (SELECT seq, ${keyExpr[key]} AS k FROM data_tasks t WHERE ${where}) ` +
              'WHERE k IS NOT NULL ORDER BY k, seq',
          )
          .iterate() as Iterable<{ seq: number; key: string }>,
      statements: () =>
        this.db
          .prepare(
            "SELECT seq, json_extract(task, '$.problem_statement') AS statement " +
              `FROM data_tasks t WHERE ${where} ORDER BY seq`,
          )
          .iterate() as Iterable<{ seq: number; statement: string }>,
      statementOf: (seq) => statementOf.get(seq) as string,
      factsOf: (seq) => factsOf.get(seq) as DedupeFacts,
    };
  }

  /**
   * The kept tasks (or those `stage` works on) one at a time, so that a pass over a large store holds one in memory.
   */
  *eachKeptTask(stage?: DataStage): Generator<DataTask> {
    for (const r of this.db
      .prepare(`SELECT task FROM data_tasks t WHERE ${stage ? keptBefore(stage) : kept} ORDER BY seq`)
      .iterate() as Iterable<{ task: string }>) {
      yield JSON.parse(r.task);
    }
  }

  /** The tasks select held out for validation: dropped by that rule alone. */
  *eachHeldOut(): Generator<DataTask> {
    const rows = this.db.prepare(
      "SELECT task FROM data_tasks t WHERE EXISTS (SELECT 1 FROM data_drops d WHERE d.uid = t.uid AND d.rule = 'held-out') " +
        "AND NOT EXISTS (SELECT 1 FROM data_drops d WHERE d.uid = t.uid AND d.rule != 'held-out') ORDER BY seq",
    );
    for (const r of rows.iterate() as Iterable<{ task: string }>) yield JSON.parse(r.task);
  }

  /**
   * Every task's facts (clean judges them all), one at a time, and whether it names an environment (image,
   * install_config, eval_script).
   */
  *ruleInputs(): Generator<TaskFacts & { has_env: boolean }> {
    const rows = this.db.prepare(
      `SELECT ${factColumns}, (coalesce(json_extract(task, '$.image_name'), json_extract(task, '$.extra.image'),
      json_extract(task, '$.eval_script'), json_extract(task, '$.install_config')) IS NOT NULL) AS has_env ` +
        'FROM data_tasks t ORDER BY seq',
    );
    for (const t of rows.iterate() as Iterable<TaskFacts & { has_env: number }>)
      yield { ...t, has_env: t.has_env === 1 };
  }

  /** The kept tasks' numbers the stats describe, column by column. */
  keptNumbers(): Record<StatColumn, number[]> {
    const out: Record<StatColumn, number[]> = { n_lines: [], n_files: [], n_f2p: [], n_p2p: [], ps_words: [] };
    const rows = this.db.prepare(`SELECT n_lines, n_files, n_f2p, n_p2p, ps_words FROM data_tasks t WHERE ${kept}`);
    for (const r of rows.iterate() as Iterable<Record<StatColumn, number>>) {
      for (const k of statColumns) out[k].push(r[k]);
    }
    return out;
  }

  /** How many tasks are kept. */
  keptCount(): number {
    return (this.db.prepare(`SELECT count(*) AS n FROM data_tasks t WHERE ${kept}`).get() as { n: number }).n;
  }

  /**
   * Replaces a stage's verdicts and forgets those of the stages after it, which judged what this one kept: they must
   * run again (returned: the ones that had verdicts). Groups and flags are optional.
   */
  setStage(
    stage: DataStage,
    drops: Drop[],
    groups: Group[] = [],
    flags: { uid: string; kind: string; detail: string }[] = [],
  ): DataStage[] {
    const later = dataStages.slice(dataStages.indexOf(stage) + 1);
    // The later stages whose verdicts this clears (a selection and its hold-out among them): the caller says so.
    const cleared = (
      this.db
        .prepare(`SELECT DISTINCT stage FROM data_drops WHERE stage IN (${later.map(() => '?').join(', ') || "''"})`)
        .pluck()
        .all(...later) as DataStage[]
    ).sort((a, b) => dataStages.indexOf(a) - dataStages.indexOf(b));
    this.db.transaction(() => {
      for (const s of dataStages.slice(dataStages.indexOf(stage))) this.clearStage(s);
      const drop = this.db.prepare('INSERT OR REPLACE INTO data_drops (uid, stage, rule, detail) VALUES (?, ?, ?, ?)');
      for (const d of drops) drop.run(d.uid, stage, d.rule, d.detail);
      if (stage === 'dedupe') {
        const member = this.db.prepare(
          'INSERT OR REPLACE INTO data_groups (uid, group_id, kind, kept) VALUES (?, ?, ?, ?)',
        );
        for (const g of groups) for (const m of g.members) member.run(m.uid, g.group_id, g.kind, m.kept ? 1 : 0);
      }
      if (stage === 'decontaminate') {
        const flag = this.db.prepare('INSERT OR REPLACE INTO data_flags (uid, kind, detail) VALUES (?, ?, ?)');
        for (const f of flags) flag.run(f.uid, f.kind, f.detail);
      }
    })();
    return cleared;
  }

  private clearStage(stage: DataStage): void {
    this.db.prepare('DELETE FROM data_drops WHERE stage = ?').run(stage);
    if (stage === 'dedupe') this.db.prepare('DELETE FROM data_groups').run();
    if (stage === 'decontaminate') this.db.prepare('DELETE FROM data_flags').run();
  }

  /** Whether any stage has judged the tasks (new rows make those verdicts stale). */
  hasVerdicts(): boolean {
    return this.db.prepare('SELECT 1 FROM data_drops UNION ALL SELECT 1 FROM data_groups LIMIT 1').get() !== undefined;
  }

  /** New rows: every stage must judge again. */
  clearVerdicts(): void {
    this.db.transaction(() => {
      for (const stage of dataStages) this.clearStage(stage);
    })();
  }

  /** Runs `work` in one transaction that commits only if it finishes (an import is all or nothing). */
  async atomically<T>(work: () => Promise<T>): Promise<T> {
    this.db.exec('BEGIN IMMEDIATE');
    try {
      const result = await work();
      this.db.exec('COMMIT');
      return result;
    } catch (err) {
      this.db.exec('ROLLBACK');
      this.nextSeq = null;
      throw err;
    }
  }

  /** A file imported again replaces its earlier invalid rows. */
  forgetInvalid(file: string): void {
    this.db.prepare('DELETE FROM data_invalid WHERE file = ?').run(file);
  }

  counts(): {
    tasks: number;
    kept: number;
    invalid: number;
    drops: { stage: string; rule: string; n: number }[];
    sources: { source: string; n: number; kept: number }[];
    repos: { repo: string; n: number }[];
  } {
    const one = (sql: string): number => (this.db.prepare(sql).get() as { n: number }).n;
    return {
      tasks: one('SELECT count(*) AS n FROM data_tasks'),
      kept: one(`SELECT count(*) AS n FROM data_tasks t WHERE ${kept}`),
      invalid: one('SELECT count(*) AS n FROM data_invalid'),
      drops: this.db
        .prepare(
          'SELECT stage, rule, count(DISTINCT uid) AS n FROM data_drops GROUP BY stage, rule ORDER BY stage, n DESC',
        )
        .all() as { stage: string; rule: string; n: number }[],
      sources: this.db
        .prepare(
          `SELECT source, count(*) AS n, sum(CASE WHEN ${kept} THEN 1 ELSE 0 END) AS kept ` +
            'FROM data_tasks t GROUP BY source ORDER BY n DESC',
        )
        .all() as { source: string; n: number; kept: number }[],
      repos: this.db
        .prepare(`SELECT repo, count(*) AS n FROM data_tasks t WHERE ${kept} GROUP BY repo ORDER BY n DESC LIMIT 20`)
        .all() as { repo: string; n: number }[],
    };
  }

  invalidRows(limit = 20): { file: string; line: number; reason: string }[] {
    return this.db.prepare('SELECT file, line, reason FROM data_invalid ORDER BY file, line LIMIT ?').all(limit) as {
      file: string;
      line: number;
      reason: string;
    }[];
  }

  /** Everything known about the rows of one instance id: where they came from, drops, duplicate groups, flags. */
  explain(instanceId: string) {
    const rows = this.db
      .prepare('SELECT uid, source, file, line, created_at FROM data_tasks WHERE instance_id = ? ORDER BY seq')
      .all(instanceId) as { uid: string; source: string; file: string; line: number; created_at: string | null }[];
    return rows.map((r) => ({
      ...r,
      drops: this.db.prepare('SELECT stage, rule, detail FROM data_drops WHERE uid = ? ORDER BY stage').all(r.uid) as {
        stage: string;
        rule: string;
        detail: string;
      }[],
      groups: (
        this.db.prepare('SELECT group_id, kind FROM data_groups WHERE uid = ?').all(r.uid) as {
          group_id: string;
          kind: string;
        }[]
      ).map((g) => ({
        ...g,
        members: this.db
          .prepare(
            'SELECT g.uid, t.instance_id, t.source, g.kept FROM data_groups g ' +
              'JOIN data_tasks t ON t.uid = g.uid WHERE g.group_id = ? ORDER BY t.seq',
          )
          .all(g.group_id) as { uid: string; instance_id: string; source: string; kept: number }[],
      })),
      flags: this.db.prepare('SELECT kind, detail FROM data_flags WHERE uid = ?').all(r.uid) as {
        kind: string;
        detail: string;
      }[],
    }));
  }
}
