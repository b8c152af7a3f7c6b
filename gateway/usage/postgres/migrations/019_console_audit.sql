-- The console's audit trail (console/audit/postgres-store.ts; docs/console.md: Activity and audit trail): one row per
-- person's action (sign-in and sign-out, key created, rotated, revoked, checkout started, statement downloaded), with
-- who (user name, IdP subject), which object (account, key name: never a key), when, from where, and the outcome.
-- account '' holds the console-wide records (sign-ins, sign-outs). Rows older than the retention setting are deleted
-- by the console's sweep (SVC_CONSOLE_AUDIT_RETENTION_DAYS).
CREATE TABLE console_audit (
  id          bigserial   PRIMARY KEY,
  at          timestamptz NOT NULL,
  account     text        NOT NULL,
  actor       text        NOT NULL,
  subject     text        NOT NULL,
  method      text        NOT NULL,
  action      text        NOT NULL,
  object      text        NOT NULL,
  outcome     text        NOT NULL,
  status      smallint    NOT NULL,
  detail      text        NOT NULL,
  client_ip   text        NOT NULL,
  user_agent  text        NOT NULL
);
-- The Activity page: one account's records, newest first (filters on action and person narrow that range).
CREATE INDEX console_audit_account_at ON console_audit (account, at DESC, id DESC);
-- The retention sweep.
CREATE INDEX console_audit_at ON console_audit (at);
