-- What the guardrails found and did on a call (gateway/guardrails/): the usage event's `guardrails` facts, a JSON
-- array of {guardrail, check, action, stage, kind, count}; never the matched text. NULL when no check matched.
-- The console's usage page counts blocks and masks by key and guardrail from it, through the partial index: only
-- the calls a guardrail touched are in it, so the page reads those rows and no others.
ALTER TABLE usage_events ADD COLUMN guardrails jsonb;
CREATE INDEX usage_events_guardrails ON usage_events (account, created_at) WHERE guardrails IS NOT NULL;
