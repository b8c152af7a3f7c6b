-- Audio calls are billed in units of their own beside tokens: billed_unit 'seconds' (a transcription's audio) or
-- 'characters' (a speech's input), billed_units how many; NULL and 0 on every other call and on older rows.
ALTER TABLE usage_events
  ADD COLUMN billed_unit  text   CHECK (billed_unit IN ('seconds', 'characters')),
  ADD COLUMN billed_units bigint NOT NULL DEFAULT 0;
