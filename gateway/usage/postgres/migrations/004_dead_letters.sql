-- Entries the exporter could not turn into a usage_events row (unreadable, invalid, rejected by Postgres, or
-- delivered too many times). Kept whole, parked once per (source, entry_id), so nothing is dropped silently:
-- fix and replay them, or explain them.
CREATE TABLE usage_dead_letters (
  id         bigserial   PRIMARY KEY,
  source     text        NOT NULL,  -- the Redis stream's name, or 'memory' for the standalone in-memory queue
  entry_id   text        NOT NULL,  -- the stream entry id (the event id in memory mode)
  event_id   text,                  -- when it could be read
  reason     text        NOT NULL,
  detail     text        NOT NULL,
  payload    text        NOT NULL,  -- the entry's fields as JSON
  parked_at  timestamptz NOT NULL DEFAULT now(),
  UNIQUE (source, entry_id)
);
