-- usage_events: one row per call (success, error, fallback), as the gateway made it at admission.
-- Partitioned by month on created_at. The unique key must include the partition key, so it is
-- (event_id, created_at): both are set once at admission and travel together in the event, so a redelivered
-- event always carries the same pair and ON CONFLICT DO NOTHING makes inserts idempotent.
CREATE TABLE usage_events (
  event_id           uuid        NOT NULL,
  created_at         timestamptz NOT NULL,
  account            text        NOT NULL,
  api_key            text        NOT NULL,
  task_type          text,
  endpoint           text        NOT NULL,
  requested_model    text        NOT NULL,
  served_model       text,
  upstream           text,
  fallback           boolean     NOT NULL,
  fallback_reason    text,
  status             smallint    NOT NULL,
  error_code         text,
  stream             boolean     NOT NULL,
  input_tokens       integer     NOT NULL,
  output_tokens      integer     NOT NULL,
  cache_read_tokens  integer     NOT NULL DEFAULT 0,
  cache_write_tokens integer     NOT NULL DEFAULT 0,
  -- Money: integer nano-USD as the ledger keeps it, and the exact decimal for people and dashboards.
  cost_nano          bigint      NOT NULL,
  fee_nano           bigint      NOT NULL,
  cost_usd           numeric(20, 9) GENERATED ALWAYS AS (cost_nano::numeric / 1000000000) STORED,
  latency_ms         integer     NOT NULL,
  ttft_ms            integer,
  exported_at        timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (event_id, created_at)
) PARTITION BY RANGE (created_at);

-- Rows arrive in roughly created_at order, so a BRIN index answers time ranges at a tiny fraction of a btree's
-- size; the btree serves one key's or account's calls over a time range (drill-down, support questions).
CREATE INDEX usage_events_created_brin ON usage_events USING brin (created_at) WITH (pages_per_range = 32);
CREATE INDEX usage_events_key_time ON usage_events (account, api_key, created_at);

-- Creates the month's partition (UTC) if missing; safe when several writers call it at once.
CREATE FUNCTION usage_ensure_partition(month_of timestamptz) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  m date := date_trunc('month', month_of AT TIME ZONE 'UTC')::date;
  part text := format('usage_events_%s', to_char(m, 'YYYY_MM'));
BEGIN
  IF to_regclass(part) IS NOT NULL THEN RETURN false; END IF;
  PERFORM pg_advisory_xact_lock(hashtext('svc-gateway usage partitions'));
  IF to_regclass(part) IS NOT NULL THEN RETURN false; END IF;
  EXECUTE format('CREATE TABLE %I PARTITION OF usage_events FOR VALUES FROM (%L) TO (%L)',
    part, to_char(m, 'YYYY-MM-DD') || ' 00:00:00+00', to_char(m + interval '1 month', 'YYYY-MM-DD') || ' 00:00:00+00');
  RETURN true;
END $$;
