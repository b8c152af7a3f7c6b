-- Each kind's own units in the daily rollup, beside tokens: the seconds of audio transcriptions were billed for, the
-- characters of speech inputs and the images image calls returned (usage_events.billed_unit, billed_units: migration
-- 014, 'images' added here), and the lines of batches (usage_events.batch: a line of /v1/batches or Anthropic's
-- Message Batches, charged at the batch price) with what they cost. Rows rolled up before this migration keep 0.
ALTER TABLE usage_events ADD COLUMN batch boolean NOT NULL DEFAULT false;
-- Migration 014's column CHECK, under the name Postgres gave it, widened (both recurse to every partition).
ALTER TABLE usage_events DROP CONSTRAINT usage_events_billed_unit_check;
ALTER TABLE usage_events ADD CONSTRAINT usage_events_billed_unit_check CHECK (billed_unit IN ('seconds', 'characters', 'images'));
ALTER TABLE usage_daily
  ADD COLUMN billed_seconds    bigint NOT NULL DEFAULT 0,
  ADD COLUMN billed_characters bigint NOT NULL DEFAULT 0,
  ADD COLUMN billed_images     bigint NOT NULL DEFAULT 0,
  ADD COLUMN batch_requests    bigint NOT NULL DEFAULT 0,
  ADD COLUMN batch_cost_nano   bigint NOT NULL DEFAULT 0;

-- The spend-by-kind view (migration 012) with those units added at its end.
CREATE OR REPLACE VIEW usage_spend_by_kind_daily AS
SELECT day, account, kind, sum(requests) AS requests, sum(errors) AS errors,
       sum(input_tokens) AS input_tokens,
       coalesce(sum(output_tokens) FILTER (WHERE kind <> 'rerank'), 0) AS output_tokens,
       coalesce(sum(output_tokens) FILTER (WHERE kind = 'rerank'), 0) AS search_units,
       sum(cost_nano) AS cost_nano, (sum(cost_nano)::numeric / 1000000000)::numeric(20, 9) AS cost_usd,
       sum(billed_seconds) AS audio_seconds, sum(billed_characters) AS characters,
       sum(batch_requests) AS batch_requests, (sum(batch_cost_nano)::numeric / 1000000000)::numeric(20, 9) AS batch_cost_usd,
       sum(billed_images) AS images
FROM usage_daily GROUP BY day, account, kind;
