import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { AlightError, ExitCode } from '../errors.js';
import type { RolloutMode, RolloutState } from '../rollouts/state.js';
import { CallCommits } from './call-commits.js';
import { CallStore } from './calls.js';
import { DataStore } from './data.js';
import { MeasureStore } from './data-measures.js';
import { JudgeStore } from './judge.js';
import { migrations } from './migrations.js';

export interface RunRow {
  name: string;
  mode: string;
  created_at: number;
  config: string | null;
}
export interface TrainStepRow {
  step: number;
  metrics: Record<string, unknown>;
  checkpoint: string | null;
  created_at: number;
}
export interface RunListing extends RunRow {
  rollouts: number;
  succeeded: number;
  failed: number;
  calls: number;
  mean_reward: number | null;
}

export interface RolloutRow {
  id: string;
  run: string;
  task_id: string | null;
  group_id: string | null;
  attempt: number;
  mode: RolloutMode;
  state: RolloutState;
  exit_code: number | null;
  error: string | null;
  created_at: number;
  started_at: number | null;
  ended_at: number | null;
}
/** Which rollouts: of a run, a mode (train, val), a state (succeeded, failed…). */
export interface RolloutFilter {
  run?: string;
  mode?: string;
  state?: string;
  group?: string;
  /** Only those of the run's groups whose members (two or more, by `rule`) all have the same reward. */
  zeroVariance?: GroupRule;
}

/**
 * Who counts in a group and with what reward, as training decides (train.rollouts.failed, train.batch.missingReward):
 * succeeded rollouts, failed ones at 0 when `failedAsZero`; a missing reward as 0, or the rollout left out.
 */
export interface GroupRule {
  failedAsZero: boolean;
  dropMissing: boolean;
}

/** The event that marks a rollout the judge could not score: it is in no group's baseline and never trained on. */
export const JUDGE_FAILED = 'judge-failed';

/**
 * The members of a run's groups (`x`) with their rewards (`v`) by a rule: one SQL for the filter and the list. A
 * rollout the judge failed is no member.
 */
function groupMembers(rule: GroupRule): string {
  return `SELECT x.id, x.group_id AS g, x.created_at, v FROM (SELECT x.*, CASE WHEN x.state = 'failed' THEN 0
      ELSE ${rule.dropMissing ? '' : 'coalesce('}(${latestReward('x')})${rule.dropMissing ? '' : ', 0)'} END AS v
    FROM rollouts x WHERE x.run = ? AND x.group_id IS NOT NULL
      AND (x.state = 'succeeded'${rule.failedAsZero ? " OR x.state = 'failed'" : ''})
      AND NOT EXISTS (SELECT 1 FROM events e WHERE e.rollout_id = x.id AND e.type = '${JUDGE_FAILED}')) x
    ${rule.dropMissing ? 'WHERE v IS NOT NULL' : ''}`;
}
export interface RolloutSummary extends RolloutRow {
  reward: number | null;
  calls: number;
  error_calls: number;
  prompt_tokens: number;
  completion_tokens: number;
  /** The oldest weights version that served one of its calls (null: no versioned call). */
  min_version: number | null;
}
export interface RewardRow {
  value: number;
  reason: string | null;
  source: string;
}
export interface EventRow {
  type: string;
  data: string;
  created_at: number;
}

const rolloutColumns =
  'id, run, task_id, group_id, attempt, mode, state, exit_code, error, created_at, started_at, ended_at';
/** The WHERE terms (on `rollouts r`) and parameters of a filter. */
function rolloutWhere(filter: RolloutFilter): { where: string[]; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  for (const [column, value] of [
    ['r.run = ?', filter.run],
    ['r.mode = ?', filter.mode],
    ['r.state = ?', filter.state],
    ['r.group_id = ?', filter.group],
  ] as const) {
    if (value === undefined) continue;
    where.push(column);
    params.push(value);
  }
  if (filter.zeroVariance) {
    where.push(`r.group_id IN (SELECT g FROM (${groupMembers(filter.zeroVariance)})
      GROUP BY g HAVING count(*) > 1 AND max(v) = min(v))`);
    params.push(filter.run ?? null);
  }
  return { where, params };
}

const latestReward = (r: string) =>
  `SELECT value FROM rewards w WHERE w.rollout_id = ${r}.id ORDER BY w.id DESC LIMIT 1`;

const summaryColumns = `r.id, r.run, r.task_id, r.group_id, r.attempt, r.mode, r.state, r.exit_code, r.error,
  r.created_at, r.started_at, r.ended_at,
  (${latestReward('r')}) AS reward,
  (SELECT count(*) FROM calls c WHERE c.rollout_id = r.id) AS calls,
  (SELECT count(*) FROM calls c WHERE c.rollout_id = r.id AND c.status != 'ok') AS error_calls,
  (SELECT coalesce(sum(prompt_tokens), 0) FROM calls c WHERE c.rollout_id = r.id) AS prompt_tokens,
  (SELECT coalesce(sum(completion_tokens), 0) FROM calls c WHERE c.rollout_id = r.id) AS completion_tokens,
  (SELECT min(model_version) FROM calls c WHERE c.rollout_id = r.id AND c.status = 'ok') AS min_version`;

/** The SQLite trace store: the only module that writes SQL. One instance per process and file. */
export class Store {
  readonly calls: CallStore;
  /** The gateway's way to store calls: grouped commits (call-commits.ts). */
  readonly commits: CallCommits;
  readonly data: DataStore;
  readonly measures: MeasureStore;
  readonly judge: JudgeStore;

  private constructor(
    readonly db: Database.Database,
    readonly path: string,
  ) {
    this.calls = new CallStore(db);
    this.commits = new CallCommits(db, this.calls);
    this.data = new DataStore(db);
    this.measures = new MeasureStore(db);
    this.judge = new JudgeStore(db);
  }

  static open(path: string): Store {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    let db: Database.Database;
    try {
      db = new Database(path);
    } catch (err) {
      throw new AlightError(`cannot open the database ${path}: ${(err as Error).message}`, ExitCode.input);
    }
    db.pragma('journal_mode = WAL');
    // NORMAL in WAL mode: a committed call survives a killed process; only an OS crash can lose the last commits.
    db.pragma('synchronous = NORMAL');
    db.pragma('busy_timeout = 5000');
    migrate(db, path);
    return new Store(db, path);
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  // runs
  ensureRun(name: string, mode: string, config: unknown): void {
    this.db
      .prepare('INSERT OR IGNORE INTO runs (name, mode, created_at, config) VALUES (?, ?, ?, ?)')
      .run(name, mode, Date.now(), config === undefined ? null : JSON.stringify(config));
  }

  setRunConfig(name: string, config: unknown): void {
    this.db.prepare('UPDATE runs SET config = ? WHERE name = ?').run(JSON.stringify(config), name);
  }

  getRun(name: string): RunRow | undefined {
    return this.db.prepare('SELECT * FROM runs WHERE name = ?').get(name) as RunRow | undefined;
  }

  listRuns(): RunListing[] {
    return this.db
      .prepare(
        `
      SELECT u.*,
        (SELECT count(*) FROM rollouts r WHERE r.run = u.name) AS rollouts,
        (SELECT count(*) FROM rollouts r WHERE r.run = u.name AND r.state = 'succeeded') AS succeeded,
        (SELECT count(*) FROM rollouts r WHERE r.run = u.name AND r.state = 'failed') AS failed,
        (SELECT count(*) FROM calls c JOIN rollouts r ON c.rollout_id = r.id WHERE r.run = u.name) AS calls,
        (SELECT avg(w.value) FROM rollouts r JOIN rewards w ON w.id = ` +
          `(SELECT max(id) FROM rewards WHERE rollout_id = r.id)
          WHERE r.run = u.name) AS mean_reward
      FROM runs u ORDER BY u.created_at`,
      )
      .all() as RunListing[];
  }

  putTask(run: string, id: string, data: unknown): void {
    this.db.prepare('INSERT OR REPLACE INTO tasks (run, id, data) VALUES (?, ?, ?)').run(run, id, JSON.stringify(data));
  }

  // rollouts
  insertRollout(row: Omit<RolloutRow, 'exit_code' | 'error' | 'started_at' | 'ended_at'>, tokenHash: string): void {
    this.db
      .prepare(`INSERT INTO rollouts (id, run, task_id, group_id, attempt, mode, state, token_hash, created_at)
      VALUES (@id, @run, @task_id, @group_id, @attempt, @mode, @state, @token_hash, @created_at)`)
      .run({ ...row, token_hash: tokenHash });
  }

  getRollout(id: string): RolloutRow | undefined {
    return this.db.prepare(`SELECT ${rolloutColumns} FROM rollouts WHERE id = ?`).get(id) as RolloutRow | undefined;
  }

  rolloutByTokenHash(hash: string): RolloutRow | undefined {
    return this.db.prepare(`SELECT ${rolloutColumns} FROM rollouts WHERE token_hash = ?`).get(hash) as
      | RolloutRow
      | undefined;
  }

  setRolloutState(
    id: string,
    patch: { state: RolloutState; exit_code?: number | null; error?: string | null; at: number },
  ): void {
    const timeColumn = patch.state === 'running' ? 'started_at' : 'ended_at';
    this.db
      .prepare(`UPDATE rollouts SET state = ?, exit_code = coalesce(?, exit_code), error = coalesce(?, error),
      ${timeColumn} = ? WHERE id = ?`)
      .run(patch.state, patch.exit_code ?? null, patch.error ?? null, patch.at, id);
  }

  /** Rollouts with their reward and call counts; `endedAfter` (ms) and `limit` take the first to end after a time. */
  rolloutSummaries(
    filter: RolloutFilter & { ids?: string[]; endedAfter?: number; limit?: number; offset?: number } = {},
  ): RolloutSummary[] {
    const { where, params } = rolloutWhere(filter);
    if (filter.endedAfter !== undefined) {
      where.push('r.ended_at > ?');
      params.push(filter.endedAfter);
    }
    if (filter.ids) {
      where.push(`r.id IN (${filter.ids.map(() => '?').join(',')})`);
      params.push(...filter.ids);
    }
    const order = filter.endedAfter === undefined ? 'r.created_at, r.id' : 'r.ended_at, r.id';
    const whereSql = where.length ? `WHERE ${where.join(' AND ')}` : '';
    // A page: its ids first (an index walk), then the per-rollout sums for those rows only, not for the skipped ones.
    const sql = filter.limit
      ? `SELECT ${summaryColumns} FROM rollouts r WHERE r.id IN (SELECT r.id FROM rollouts r ${whereSql}
          ORDER BY ${order} LIMIT ${Math.floor(filter.limit)} OFFSET ${Math.floor(filter.offset ?? 0)}) ORDER BY ${order}`
      : `SELECT ${summaryColumns} FROM rollouts r ${whereSql} ORDER BY ${order}`;
    return this.db.prepare(sql).all(...params) as RolloutSummary[];
  }

  /** A run's rollouts' ids and states, in page order. */
  rolloutStates(run: string): { id: string; state: RolloutState }[] {
    return this.db.prepare('SELECT id, state FROM rollouts WHERE run = ? ORDER BY created_at, id').all(run) as {
      id: string;
      state: RolloutState;
    }[];
  }

  /** The members of a run's `groups` with their rewards, by `rule` (what advantages are computed from). */
  groupRewards(
    run: string,
    groups: readonly string[],
    rule: GroupRule,
  ): { id: string; group_id: string; reward: number }[] {
    if (groups.length === 0) return [];
    return this.db
      .prepare(`SELECT id, g AS group_id, v AS reward FROM (${groupMembers(rule)})
        WHERE g IN (${groups.map(() => '?').join(',')}) ORDER BY created_at, id`)
      .all(run, ...groups) as { id: string; group_id: string; reward: number }[];
  }

  /** How many rollouts a filter matches (a page's total). */
  countRollouts(filter: RolloutFilter): number {
    const { where, params } = rolloutWhere(filter);
    return this.db
      .prepare(`SELECT count(*) FROM rollouts r WHERE ${['1', ...where].join(' AND ')}`)
      .pluck()
      .get(...params) as number;
  }

  // rewards and events
  addReward(rolloutId: string, value: number, reason: string | null, source: string): void {
    this.db
      .prepare('INSERT INTO rewards (rollout_id, value, reason, source, created_at) VALUES (?, ?, ?, ?, ?)')
      .run(rolloutId, value, reason, source, Date.now());
  }

  lastReward(rolloutId: string): RewardRow | undefined {
    return this.db
      .prepare('SELECT value, reason, source FROM rewards WHERE rollout_id = ? ORDER BY id DESC LIMIT 1')
      .get(rolloutId) as RewardRow | undefined;
  }

  /** Every reward a rollout was given, oldest first: the harness's, a command's, a judge's (its explanation the reason). */
  rewards(rolloutId: string): RewardRow[] {
    return this.db
      .prepare('SELECT value, reason, source FROM rewards WHERE rollout_id = ? ORDER BY id')
      .all(rolloutId) as RewardRow[];
  }

  addEvent(rolloutId: string, type: string, data: unknown): void {
    this.db
      .prepare('INSERT INTO events (rollout_id, type, data, created_at) VALUES (?, ?, ?, ?)')
      .run(rolloutId, type, JSON.stringify(data), Date.now());
  }

  events(rolloutId: string): EventRow[] {
    return this.db
      .prepare('SELECT type, data, created_at FROM events WHERE rollout_id = ? ORDER BY id')
      .all(rolloutId) as EventRow[];
  }

  // training steps
  putTrainStep(run: string, step: number, metrics: Record<string, unknown>, checkpoint: string | null): void {
    this.db
      .prepare('INSERT OR REPLACE INTO train_steps (run, step, metrics, checkpoint, created_at) VALUES (?, ?, ?, ?, ?)')
      .run(run, step, JSON.stringify(metrics), checkpoint, Date.now());
  }

  trainSteps(run: string): TrainStepRow[] {
    return (
      this.db
        .prepare('SELECT step, metrics, checkpoint, created_at FROM train_steps WHERE run = ? ORDER BY step')
        .all(run) as { step: number; metrics: string; checkpoint: string | null; created_at: number }[]
    ).map((r) => ({ ...r, metrics: JSON.parse(r.metrics) }));
  }

  /** Forgets the steps after `after`: a resumed run redoes them from its checkpoint. */
  truncateTrainSteps(run: string, after: number): void {
    this.db.prepare('DELETE FROM train_steps WHERE run = ? AND step > ?').run(run, after);
  }
}

function migrate(db: Database.Database, path: string): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > migrations.length) {
    throw new AlightError(
      `${path} was written by a newer alight (schema ${current}, this one knows ${migrations.length}); upgrade alight`,
      ExitCode.input,
    );
  }
  for (let v = current; v < migrations.length; v++) {
    db.transaction(() => {
      db.exec(migrations[v]);
      db.pragma(`user_version = ${v + 1}`);
    })();
  }
}
