import type Database from 'better-sqlite3';

/** One call to a judge, as stored: the rollouts it judged, its tokens and time, and what went wrong. */
export interface StoredJudgeCall {
  run: string;
  groupId: string | null;
  rollouts: string[];
  model: string;
  promptTokens: number | null;
  completionTokens: number | null;
  ms: number;
  problem: string | null;
  answer: string | null;
}

/** A score the judge gave, as the cache keeps it. */
export interface CachedScore {
  score: number;
  explanation: string;
}

/** The SQL of judge rewards: the judge's calls (apart from the policy's: never trained on) and its cache. */
export class JudgeStore {
  constructor(private readonly db: Database.Database) {}

  addCall(c: StoredJudgeCall): void {
    this.db
      .prepare(
        `INSERT INTO judge_calls (run, group_id, rollouts, model, prompt_tokens, completion_tokens, ms, problem, answer,
          created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        c.run,
        c.groupId,
        JSON.stringify(c.rollouts),
        c.model,
        c.promptTokens,
        c.completionTokens,
        c.ms,
        c.problem,
        c.answer,
        Date.now(),
      );
  }

  /** A run's judge calls, or only those that judged `rollout`. */
  calls(run: string, rollout?: string): StoredJudgeCall[] {
    const rows = (
      rollout === undefined
        ? this.db.prepare('SELECT * FROM judge_calls WHERE run = ? ORDER BY id').all(run)
        : this.db
            .prepare(
              `SELECT * FROM judge_calls c WHERE run = ?
                AND EXISTS (SELECT 1 FROM json_each(c.rollouts) WHERE value = ?) ORDER BY id`,
            )
            .all(run, rollout)
    ) as Record<string, unknown>[];
    return rows.map((r) => ({
      run: r.run as string,
      groupId: r.group_id as string | null,
      rollouts: JSON.parse(r.rollouts as string),
      model: r.model as string,
      promptTokens: r.prompt_tokens as number | null,
      completionTokens: r.completion_tokens as number | null,
      ms: r.ms as number,
      problem: r.problem as string | null,
      answer: r.answer as string | null,
    }));
  }

  /** The scores a judge gave a group of this content (per trajectory content key), or undefined. */
  cached(key: string): Record<string, CachedScore> | undefined {
    const row = this.db.prepare('SELECT scores FROM judge_cache WHERE key = ?').pluck().get(key) as string | undefined;
    return row === undefined ? undefined : JSON.parse(row);
  }

  putCache(key: string, scores: Record<string, CachedScore>): void {
    this.db
      .prepare('INSERT OR REPLACE INTO judge_cache (key, scores, created_at) VALUES (?, ?, ?)')
      .run(key, JSON.stringify(scores), Date.now());
  }
}
