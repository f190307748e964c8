import type Database from 'better-sqlite3';
import type { CallRecord, CallStore } from './calls.js';

interface Waiting {
  call: CallRecord;
  remember: boolean;
  stored(id: number): void;
  failed(err: unknown): void;
}

type Result = { id: number } | { err: unknown };

/**
 * Group commit for the gateway: the calls that finish in one turn of the event loop are inserted in one transaction,
 * one commit for all of them instead of one each. Each caller awaits its own call's id, so a call is still committed
 * before the harness gets the end of its answer (the SIGKILL test holds the gateway to that).
 */
export class CallCommits {
  private waiting: Waiting[] = [];
  /** Inserts a group in one transaction (made once: better-sqlite3 builds a wrapper per `transaction` call). */
  private readonly insertAll: (group: Waiting[], results: Result[]) => void;

  constructor(
    private readonly db: Database.Database,
    private readonly calls: CallStore,
  ) {
    this.insertAll = db.transaction((group: Waiting[], results: Result[]) => {
      for (const w of group) {
        try {
          results.push({ id: this.calls.add(w.call, w.remember) });
        } catch (err) {
          // Some errors (a full disk, RAISE(ROLLBACK)) end the whole transaction: the group fails as one.
          if (!this.db.inTransaction) throw err;
          results.push({ err });
        }
      }
    });
  }

  /** Stores a call with the others of this turn; resolves with its id once they are committed. */
  add(call: CallRecord, remember: boolean): Promise<number> {
    return new Promise((stored, failed) => {
      if (this.waiting.push({ call, remember, stored, failed }) === 1) setImmediate(() => this.commit());
    });
  }

  private commit(): void {
    const group = this.waiting;
    this.waiting = [];
    // A call that fails to insert is rolled back alone (SQLite undoes the statement); the others still commit.
    const results: Result[] = [];
    try {
      this.insertAll(group, results);
    } catch (err) {
      // Nothing was committed: the calls kept as references must not be referred to by later ones.
      this.calls.forgetReferences(group.map((w) => w.call.rolloutId));
      for (const w of group) w.failed(err);
      return;
    }
    group.forEach((w, i) => {
      const r = results[i];
      if ('id' in r) w.stored(r.id);
      else w.failed(r.err);
    });
  }
}
