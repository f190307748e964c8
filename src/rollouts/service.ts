import { createHash, randomBytes } from 'node:crypto';
import { AlightError, ExitCode } from '../errors.js';
import type { RolloutRow, Store } from '../store/store.js';
import { canTransition, isTerminal, type RolloutMode, type RolloutState } from './state.js';

export interface NewRollout {
  run: string;
  taskId?: string | null;
  groupId?: string | null;
  attempt?: number;
  mode?: RolloutMode;
  task?: unknown;
}

export interface IssuedRollout {
  rollout: RolloutRow;
  /** Shown once; only its hash is stored. */
  token: string;
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Creates rollouts with their one-attempt tokens and moves them through the state machine. */
export class Rollouts {
  // Token hash → rollout, so the agent routes do not query SQLite on every call.
  private readonly byHash = new Map<string, RolloutRow>();
  private readonly hashById = new Map<string, string>();

  /** `onEnd` hears of each rollout that ends, to drop what is kept in memory for it. */
  constructor(
    private readonly store: Store,
    private readonly onEnd: (id: string) => void = () => {},
  ) {}

  create(input: NewRollout): IssuedRollout {
    // 256 random bits: unguessable, and worthless once the rollout ends.
    const token = `alt_${randomBytes(32).toString('base64url')}`;
    const rollout: RolloutRow = {
      id: `ro_${randomBytes(8).toString('hex')}`,
      run: input.run,
      task_id: input.taskId ?? null,
      group_id: input.groupId ?? null,
      attempt: input.attempt ?? 0,
      mode: input.mode ?? 'record',
      state: 'queued',
      exit_code: null,
      error: null,
      created_at: Date.now(),
      started_at: null,
      ended_at: null,
    };
    const hash = hashToken(token);
    this.store.ensureRun(rollout.run, rollout.mode, undefined);
    if (input.task !== undefined && rollout.task_id !== null)
      this.store.putTask(rollout.run, rollout.task_id, input.task);
    this.store.insertRollout(rollout, hash);
    this.remember(hash, rollout);
    return { rollout, token };
  }

  /** The rollout a token belongs to, ended or not; undefined for unknown tokens. */
  resolve(token: string): RolloutRow | undefined {
    const hash = hashToken(token);
    let rollout = this.byHash.get(hash);
    if (!rollout) {
      rollout = this.store.rolloutByTokenHash(hash);
      if (rollout && !isTerminal(rollout.state)) this.remember(hash, rollout);
    }
    return rollout;
  }

  get(id: string): RolloutRow | undefined {
    return this.store.getRollout(id);
  }

  transition(
    id: string,
    to: RolloutState,
    detail: { exitCode?: number | null; error?: string | null } = {},
  ): RolloutRow {
    const hash = this.hashById.get(id);
    const current = (hash && this.byHash.get(hash)) || this.store.getRollout(id);
    if (!current) throw new AlightError(`no rollout ${id}`, ExitCode.input);
    if (current.state === to) return current;
    if (!canTransition(current.state, to)) {
      throw new AlightError(`rollout ${id} cannot go from ${current.state} to ${to}`, ExitCode.input);
    }
    const at = Date.now();
    this.store.setRolloutState(id, { state: to, exit_code: detail.exitCode, error: detail.error, at });
    Object.assign(
      current,
      { state: to },
      to === 'running' ? { started_at: at } : { ended_at: at },
      detail.exitCode !== undefined && { exit_code: detail.exitCode },
      detail.error && { error: detail.error },
    );
    if (isTerminal(to)) {
      // An ended rollout is looked up in SQLite again if its token comes back (to answer 403).
      if (hash) this.byHash.delete(hash);
      this.hashById.delete(id);
      this.store.calls.forget(id);
      this.onEnd(id);
    }
    return current;
  }

  private remember(hash: string, rollout: RolloutRow): void {
    this.byHash.set(hash, rollout);
    this.hashById.set(rollout.id, hash);
  }
}
