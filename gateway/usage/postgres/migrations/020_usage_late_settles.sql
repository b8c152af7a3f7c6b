-- Usage events the exporter committed to the ledger after Redis lost its data, whose rebuild may have read the ledger
-- before them (gateway/usage/exporter/late-events.ts): each waits here until the process that rebuilds (the
-- operator's leader, or a standalone gateway with DATABASE_URL) has settled it in the rebuilt Redis, unless the
-- rebuild counted it already (gateway/usage/late-settles.ts). Empty but for the seconds after a rebuild: the
-- exporter itself never writes money in Redis.
CREATE TABLE usage_late_settles (
  event_id     uuid        PRIMARY KEY,
  account      text        NOT NULL,
  month        text        NOT NULL,
  api_key      text        NOT NULL,
  cost_nano    bigint      NOT NULL,
  fee_nano     bigint      NOT NULL,
  cache_hit    boolean     NOT NULL,
  saved_nano   bigint      NOT NULL,
  recorded_at  timestamptz NOT NULL DEFAULT now()
);
