-- Model availability (gateway/availability): every probe of every target, and incidents with their updates.
-- probe_results is trimmed to 90 days by the prober itself (PostgresHistory), so it never grows past that.
CREATE TABLE probe_results (
  model        text        NOT NULL,
  target       text        NOT NULL,
  at           timestamptz NOT NULL,  -- start of the probe round (shared by every target of the model)
  ok           boolean     NOT NULL,
  latency_ms   integer     NOT NULL,
  status       integer,               -- upstream HTTP status; null without an answer (timeout, connect error)
  message      text        NOT NULL,
  cost_nano    bigint      NOT NULL,  -- the platform's cost of the probe; billed to no account
  model_state  text        NOT NULL,  -- the model's state decided by this round
  interval_ms  integer     NOT NULL,
  PRIMARY KEY (model, at, target)
);
CREATE INDEX probe_results_at ON probe_results USING brin (at);

CREATE TABLE incidents (
  id             text        PRIMARY KEY,
  title          text        NOT NULL,
  source         text        NOT NULL CHECK (source IN ('probe', 'declared')),
  models         text[]      NOT NULL,
  impact         text        NOT NULL,
  status         text        NOT NULL,
  created_at     timestamptz NOT NULL,
  updated_at     timestamptz NOT NULL,
  resolved_at    timestamptz,
  scheduled_from timestamptz,
  scheduled_to   timestamptz
);
CREATE INDEX incidents_open ON incidents (updated_at) WHERE resolved_at IS NULL;

CREATE TABLE incident_updates (
  incident_id text        NOT NULL REFERENCES incidents (id) ON DELETE CASCADE,
  seq         integer     NOT NULL,  -- 1, 2, ... in the order they were said
  at          timestamptz NOT NULL,
  status      text        NOT NULL,
  message     text        NOT NULL,
  PRIMARY KEY (incident_id, seq)
);
