-- Files and batches in Postgres (gateway/batches/postgres-records.ts; docs/api.md: Files and batches), when the
-- gateway has DATABASE_URL. Every read names the account: another account's id is simply not found.
-- batch_files: one row per file (an uploaded batch input, a batch's output or error file) until expires_at (the
-- retention setting, SVC_FILES_RETENTION_DAYS); the batch job's sweep deletes the rows past it, their chunks with them.
-- batch_file_chunks: the file's bytes in chunks of at most 1 MiB, each AES-256-GCM sealed with the config key
-- (SVC_CONFIG_KEY, else derived from SVC_KEY_PEPPER) and bound to "file/<account>/<id>/<seq>", so no line of a
-- file is in Postgres in clear and no chunk can be moved to another file or account.
-- batch_records: one row per batch, its record (gateway/batches/types.ts BatchRecord: model, holds, counts, no
-- request content) as JSON; `settled` marks the ones the job has finished.
CREATE TABLE batch_files (
  account    text        NOT NULL,
  id         text        NOT NULL,
  purpose    text        NOT NULL CHECK (purpose IN ('batch', 'batch_output', 'batch_error', 'message_batch', 'message_batch_results')),
  filename   text        NOT NULL,
  bytes      bigint      NOT NULL CHECK (bytes >= 0),
  created_at bigint      NOT NULL,
  expires_at timestamptz NOT NULL,
  model      text,
  PRIMARY KEY (account, id)
);
CREATE INDEX batch_files_expiry ON batch_files (expires_at);
CREATE INDEX batch_files_newest ON batch_files (account, created_at DESC, id DESC);

CREATE TABLE batch_file_chunks (
  account text    NOT NULL,
  file_id text    NOT NULL,
  seq     integer NOT NULL CHECK (seq >= 0),
  sealed  bytea   NOT NULL,
  PRIMARY KEY (account, file_id, seq),
  FOREIGN KEY (account, file_id) REFERENCES batch_files (account, id) ON DELETE CASCADE
);

CREATE TABLE batch_records (
  account    text    NOT NULL,
  id         text    NOT NULL,
  created_at bigint  NOT NULL,
  settled    boolean NOT NULL,
  record     jsonb   NOT NULL,
  PRIMARY KEY (account, id)
);
CREATE INDEX batch_records_newest ON batch_records (account, created_at DESC, id DESC);
CREATE INDEX batch_records_open ON batch_records (account, id) WHERE NOT settled;
