-- How a call's charged usage relates to what its upstream reported (gateway/pipeline/bound-usage.ts):
-- usage_estimated: the upstream reported no usable count (missing, negative, fractional, not a number) and the
-- gateway charged an estimate; usage_clamped: it reported more than the request could have used and the charge was
-- cut to the call's bound. Both false on rows written before this migration.
ALTER TABLE usage_events
  ADD COLUMN usage_estimated boolean NOT NULL DEFAULT false,
  ADD COLUMN usage_clamped   boolean NOT NULL DEFAULT false;
