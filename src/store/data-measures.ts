import type Database from 'better-sqlite3';

/** A task's environment, checked by grading its gold patch and the empty patch (alight data validate). */
export interface Validation {
  uid: string;
  /** `valid`, or why not (src/data/validate.ts's verdicts). */
  verdict: string;
  detail: string;
  seconds: number;
  grader: string;
}

/** How often a policy solved a task in k tries, measured by one run (alight data probe). */
export interface Probe {
  uid: string;
  run: string;
  k: number;
  passes: number;
}

/** The SQL of the measurements `alight data` keeps per task: they outlive the stages' verdicts, derived from them. */
export class MeasureStore {
  constructor(private readonly db: Database.Database) {}

  setValidation(v: Validation): void {
    this.db
      .prepare(
        'INSERT OR REPLACE INTO data_validations (uid, verdict, detail, seconds, grader, at) VALUES (?, ?, ?, ?, ?, ?)',
      )
      .run(v.uid, v.verdict, v.detail, v.seconds, v.grader, new Date().toISOString());
  }

  validation(uid: string): Validation | undefined {
    return this.db
      .prepare('SELECT uid, verdict, detail, seconds, grader FROM data_validations WHERE uid = ?')
      .get(uid) as Validation | undefined;
  }

  /** Verdicts and how many of each, over the tasks that have one. */
  verdictCounts(): { verdict: string; n: number }[] {
    return this.db
      .prepare('SELECT verdict, count(*) AS n FROM data_validations GROUP BY verdict ORDER BY n DESC')
      .all() as { verdict: string; n: number }[];
  }

  setProbes(probes: Probe[]): void {
    const put = this.db.prepare('INSERT OR REPLACE INTO data_probes (uid, run, k, passes, at) VALUES (?, ?, ?, ?, ?)');
    const at = new Date().toISOString();
    this.db.transaction(() => {
      for (const p of probes) put.run(p.uid, p.run, p.k, p.passes, at);
    })();
  }

  /** One run's measurements, by task. */
  probesOf(run: string): Map<string, Probe> {
    const rows = this.db.prepare('SELECT uid, run, k, passes FROM data_probes WHERE run = ?').all(run) as Probe[];
    return new Map(rows.map((p) => [p.uid, p]));
  }

  /** Every probe of a task (one per run that measured it). */
  probesFor(uid: string): Probe[] {
    return this.db.prepare('SELECT uid, run, k, passes FROM data_probes WHERE uid = ? ORDER BY at').all(uid) as Probe[];
  }

  /** The runs that probed, newest last, with how many tasks each measured. */
  probeRuns(): { run: string; k: number; tasks: number }[] {
    return this.db
      .prepare('SELECT run, max(k) AS k, count(*) AS tasks FROM data_probes GROUP BY run ORDER BY max(at)')
      .all() as { run: string; k: number; tasks: number }[];
  }
}
