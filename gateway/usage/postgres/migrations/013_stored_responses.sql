-- Stored Responses (gateway/stored-responses/postgres.ts; docs/api.md: Stored responses). One row per response kept
-- with store: true, its account's only: every read names the account. `sealed` is the record's input items and
-- response object, AES-256-GCM sealed with the config key (SVC_CONFIG_KEY, else derived from SVC_KEY_PEPPER) and bound
-- to "response/<account>/<id>", so the conversation is never in Postgres in clear and a row cannot be moved to another
-- account. bytes: what the record counts against SVC_RESPONSES_ACCOUNT_MAX_BYTES. Rows past expires_at are never
-- read and are deleted by the account's next write.
CREATE TABLE stored_responses (
  id          text        PRIMARY KEY,
  account     text        NOT NULL,
  previous_id text,
  created_at  timestamptz NOT NULL,
  expires_at  timestamptz NOT NULL,
  bytes       integer     NOT NULL CHECK (bytes >= 0),
  sealed      text        NOT NULL
);
CREATE INDEX stored_responses_account ON stored_responses (account, expires_at);
