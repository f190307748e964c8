/**
 * Schema migrations, applied in order; `PRAGMA user_version` is the index of the last one applied.
 * Append only: never edit a migration that has shipped.
 */
export const migrations: string[] = [
  `
  CREATE TABLE runs (
    name TEXT PRIMARY KEY,
    mode TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    config TEXT
  );
  CREATE TABLE tasks (
    run TEXT NOT NULL,
    id TEXT NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (run, id)
  );
  CREATE TABLE rollouts (
    id TEXT PRIMARY KEY,
    run TEXT NOT NULL,
    task_id TEXT,
    group_id TEXT,
    attempt INTEGER NOT NULL DEFAULT 0,
    mode TEXT NOT NULL,
    state TEXT NOT NULL,
    exit_code INTEGER,
    error TEXT,
    token_hash TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL,
    started_at INTEGER,
    ended_at INTEGER
  );
  CREATE INDEX rollouts_by_run ON rollouts(run, created_at);
  -- A call's messages are msg_prefix messages of call msg_ref followed by request.messages (or prompt);
  -- its prompt tokens are prompt_prefix tokens of call prompt_ref's prompt + completion followed by prompt_suffix.
  CREATE TABLE calls (
    id INTEGER PRIMARY KEY,
    rollout_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    protocol TEXT NOT NULL,
    stream INTEGER NOT NULL,
    request TEXT NOT NULL,
    msg_ref INTEGER,
    msg_prefix INTEGER NOT NULL DEFAULT 0,
    response TEXT,
    prompt_ref INTEGER,
    prompt_prefix INTEGER NOT NULL DEFAULT 0,
    prompt_suffix BLOB,
    completion_ids BLOB,
    completion_logprobs BLOB,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    status TEXT NOT NULL,
    http_status INTEGER,
    error TEXT,
    latency_ms REAL NOT NULL,
    model_version INTEGER,
    finish_reason TEXT,
    created_at INTEGER NOT NULL,
    UNIQUE (rollout_id, seq)
  );
  CREATE TABLE events (
    id INTEGER PRIMARY KEY,
    rollout_id TEXT NOT NULL,
    type TEXT NOT NULL,
    data TEXT NOT NULL,
    created_at INTEGER NOT NULL
  );
  CREATE INDEX events_by_rollout ON events(rollout_id);
  CREATE TABLE rewards (
    id INTEGER PRIMARY KEY,
    rollout_id TEXT NOT NULL,
    value REAL NOT NULL,
    reason TEXT,
    source TEXT NOT NULL,
    created_at INTEGER NOT NULL
  );
  CREATE INDEX rewards_by_rollout ON rewards(rollout_id);
  `,
  // Training: one row per finished step, with its metrics and the checkpoint saved after it (if any).
  `
  CREATE TABLE train_steps (
    run TEXT NOT NULL,
    step INTEGER NOT NULL,
    metrics TEXT NOT NULL,
    checkpoint TEXT,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (run, step)
  );
  `,
];
