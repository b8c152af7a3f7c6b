-- The part of cost_nano that paid a call's remote guardrail checks (the clouds' content services, webhooks) at their
-- Guardrail's price; 0 on calls that ran none and on older rows.
ALTER TABLE usage_events
  ADD COLUMN guardrail_cost_nano bigint NOT NULL DEFAULT 0;
