/**
 * Schema migrations, applied in order; `PRAGMA user_version` is the number applied.
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
  // Task data (alight data): one row per distinct imported row; a task is kept while no stage has dropped it.
  `
  CREATE TABLE data_tasks (
    uid TEXT PRIMARY KEY,
    instance_id TEXT NOT NULL,
    source TEXT NOT NULL,
    repo TEXT NOT NULL,
    base_commit TEXT,
    created_at TEXT,
    task TEXT NOT NULL,
    n_files INTEGER NOT NULL, n_source_files INTEGER NOT NULL, n_hunks INTEGER NOT NULL, n_lines INTEGER NOT NULL,
    n_source_lines INTEGER NOT NULL, patch_bytes INTEGER NOT NULL, n_f2p INTEGER NOT NULL, n_p2p INTEGER NOT NULL,
    ps_chars INTEGER NOT NULL, ps_words INTEGER NOT NULL, patch_sha TEXT NOT NULL, ps_sha TEXT NOT NULL,
    file TEXT NOT NULL,
    line INTEGER NOT NULL,
    seq INTEGER NOT NULL
  );
  CREATE INDEX data_tasks_by_instance ON data_tasks(instance_id);
  CREATE TABLE data_invalid (
    file TEXT NOT NULL,
    line INTEGER NOT NULL,
    reason TEXT NOT NULL,
    PRIMARY KEY (file, line)
  );
  CREATE TABLE data_drops (
    uid TEXT NOT NULL,
    stage TEXT NOT NULL,
    rule TEXT NOT NULL,
    detail TEXT NOT NULL,
    PRIMARY KEY (uid, stage, rule)
  );
  CREATE TABLE data_groups (
    uid TEXT NOT NULL,
    group_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    kept INTEGER NOT NULL,
    PRIMARY KEY (uid, group_id)
  );
  CREATE TABLE data_flags (
    uid TEXT NOT NULL,
    kind TEXT NOT NULL,
    detail TEXT NOT NULL,
    PRIMARY KEY (uid, kind)
  );
  `,
  `
  ALTER TABLE calls ADD COLUMN harness_request TEXT;
  ALTER TABLE calls ADD COLUMN harness_ref INTEGER;
  ALTER TABLE calls ADD COLUMN harness_prefix INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE calls ADD COLUMN harness_response TEXT;
  `,
  // Every data pass reads tasks in import order: without an index each one sorted the whole table (texts included).
  `
  CREATE INDEX data_tasks_by_seq ON data_tasks(seq);
  `,
  // Measurements of tasks (alight data validate, probe): kept across the stages' verdicts, which are derived from them.
  `
  CREATE TABLE data_validations (
    uid TEXT PRIMARY KEY,
    verdict TEXT NOT NULL,
    detail TEXT NOT NULL,
    seconds REAL NOT NULL,
    grader TEXT NOT NULL,
    at TEXT NOT NULL
  );
  CREATE TABLE data_probes (
    uid TEXT NOT NULL,
    run TEXT NOT NULL,
    k INTEGER NOT NULL,
    passes INTEGER NOT NULL,
    at TEXT NOT NULL,
    PRIMARY KEY (uid, run)
  );
  `,
  // Judge rewards (issue 37): the judge's calls, apart from the policy's (never trained on), and its scores by content.
  `
  CREATE TABLE judge_calls (
    id INTEGER PRIMARY KEY,
    run TEXT NOT NULL,
    group_id TEXT,
    rollouts TEXT NOT NULL,
    model TEXT NOT NULL,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    ms REAL NOT NULL,
    problem TEXT,
    answer TEXT,
    created_at INTEGER NOT NULL
  );
  CREATE INDEX judge_calls_by_run ON judge_calls(run);
  CREATE TABLE judge_cache (
    key TEXT PRIMARY KEY,
    scores TEXT NOT NULL,
    created_at INTEGER NOT NULL
  );
  `,
  // What each call is for (issue 38): a harness's own side calls are recorded apart from its agent turns.
  `
  ALTER TABLE calls ADD COLUMN purpose TEXT NOT NULL DEFAULT 'main';
  `,
];
