-- Hosted tools (web_search, file_search, ...) the gateway left out of a call's upstream request because the
-- upstream cannot run them (ModelRoute spec.hostedTools: drop; gateway/translate/hosted-tools.ts): their types,
-- comma-separated, as the answer's x-svc-dropped-tools header named them. NULL when nothing was left out.
ALTER TABLE usage_events ADD COLUMN dropped_tools text;
