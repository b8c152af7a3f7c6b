-- What each rollup row's calls were: the kind of model call (chat, embeddings, completions, rerank, moderation) or an
-- MCP tool call (mcp), from the events' endpoint (chat takes /v1/chat/completions, /v1/responses and the Anthropic
-- endpoints). Part of the rollup's key, so one model's calls of two kinds (a chat model refused at /v1/rerank) stay
-- apart, and a rerank row's output_tokens are its search units. Rows rolled up before this migration keep '' (not
-- recorded), but MCP's, whose model names say so.
ALTER TABLE usage_daily ADD COLUMN kind text NOT NULL DEFAULT '';
UPDATE usage_daily SET kind = 'mcp' WHERE served_model LIKE 'mcp:%';
ALTER TABLE usage_daily DROP CONSTRAINT usage_daily_pkey;
ALTER TABLE usage_daily ADD PRIMARY KEY (day, account, api_key, task_type, requested_model, served_model, fallback_reason, kind);

-- Spend per day by kind, with each kind's unit: tokens, and search units for rerank.
CREATE VIEW usage_spend_by_kind_daily AS
SELECT day, account, kind, sum(requests) AS requests, sum(errors) AS errors,
       sum(input_tokens) AS input_tokens,
       coalesce(sum(output_tokens) FILTER (WHERE kind <> 'rerank'), 0) AS output_tokens,
       coalesce(sum(output_tokens) FILTER (WHERE kind = 'rerank'), 0) AS search_units,
       sum(cost_nano) AS cost_nano, (sum(cost_nano)::numeric / 1000000000)::numeric(20, 9) AS cost_usd
FROM usage_daily GROUP BY day, account, kind;
