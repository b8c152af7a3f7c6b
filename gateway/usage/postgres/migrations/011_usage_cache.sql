-- The response cache (gateway/pipeline/cache.ts; docs/billing.md: Response cache). usage_events.cache: 'hit' (answered
-- from the cache), 'miss' (looked up, called upstream), 'bypass' (not cacheable: no-store, sampling); NULL on routes
-- without a cache and on rows written before this migration. cache_saved_nano: on a hit, the original call's cost
-- minus what the hit was charged. usage_daily keeps their sums (hits and saved) as it keeps the others.
ALTER TABLE usage_events
  ADD COLUMN cache            text   CHECK (cache IN ('hit', 'miss', 'bypass')),
  ADD COLUMN cache_saved_nano bigint NOT NULL DEFAULT 0;
ALTER TABLE usage_daily
  ADD COLUMN cache_hits       bigint NOT NULL DEFAULT 0,
  ADD COLUMN cache_saved_nano bigint NOT NULL DEFAULT 0;
