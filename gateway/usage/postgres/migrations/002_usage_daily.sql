-- usage_daily: the rollup dashboards read, one row per UTC day, account, key, task, models and fallback reason.
-- Maintained in the same statement that inserts events, from the rows actually inserted (a redelivered event
-- adds nothing), so it always equals an aggregate over usage_events. Its size follows the number of distinct
-- (day, key, task, model) combinations, not the number of calls.
CREATE TABLE usage_daily (
  day                date   NOT NULL,
  account            text   NOT NULL,
  api_key            text   NOT NULL,
  task_type          text   NOT NULL,  -- '' when the call had none
  requested_model    text   NOT NULL,
  served_model       text   NOT NULL,  -- '' when nothing served (refused or failed)
  fallback_reason    text   NOT NULL,  -- '' when no fallback happened
  requests           bigint NOT NULL,
  errors             bigint NOT NULL,  -- status >= 400 (refusals, upstream failures, client aborts)
  fallbacks          bigint NOT NULL,
  input_tokens       bigint NOT NULL,
  output_tokens      bigint NOT NULL,
  cache_read_tokens  bigint NOT NULL,
  cache_write_tokens bigint NOT NULL,
  cost_nano          bigint NOT NULL,
  fee_nano           bigint NOT NULL,
  latency_ms_sum     bigint NOT NULL,
  PRIMARY KEY (day, account, api_key, task_type, requested_model, served_model, fallback_reason)
);
CREATE INDEX usage_daily_account_day ON usage_daily (account, day);

-- What dashboards use: spend per day and per month (UTC), by key, by model and by task.
CREATE VIEW usage_spend_by_key_daily AS
SELECT day, account, api_key, sum(requests) AS requests, sum(errors) AS errors, sum(fallbacks) AS fallbacks,
       sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens,
       sum(cost_nano) AS cost_nano, (sum(cost_nano)::numeric / 1000000000)::numeric(20, 9) AS cost_usd
FROM usage_daily GROUP BY day, account, api_key;

CREATE VIEW usage_spend_by_model_daily AS
SELECT day, CASE WHEN served_model = '' THEN requested_model ELSE served_model END AS model,
       sum(requests) AS requests, sum(errors) AS errors, sum(fallbacks) AS fallbacks,
       sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens,
       sum(cost_nano) AS cost_nano, (sum(cost_nano)::numeric / 1000000000)::numeric(20, 9) AS cost_usd
FROM usage_daily GROUP BY 1, 2;

CREATE VIEW usage_spend_by_task_daily AS
SELECT day, account, NULLIF(task_type, '') AS task_type, sum(requests) AS requests, sum(errors) AS errors,
       sum(fallbacks) AS fallbacks, sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens,
       sum(cost_nano) AS cost_nano, (sum(cost_nano)::numeric / 1000000000)::numeric(20, 9) AS cost_usd
FROM usage_daily GROUP BY day, account, task_type;

CREATE VIEW usage_spend_monthly AS
SELECT date_trunc('month', day)::date AS month, account, api_key, NULLIF(task_type, '') AS task_type,
       CASE WHEN served_model = '' THEN requested_model ELSE served_model END AS model,
       sum(requests) AS requests, sum(errors) AS errors, sum(fallbacks) AS fallbacks,
       sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens,
       sum(cost_nano) AS cost_nano, (sum(cost_nano)::numeric / 1000000000)::numeric(20, 9) AS cost_usd
FROM usage_daily GROUP BY 1, 2, 3, 4, 5;

CREATE VIEW usage_fallbacks_daily AS
SELECT day, requested_model, served_model, fallback_reason AS reason, sum(fallbacks) AS fallbacks
FROM usage_daily WHERE fallback_reason <> '' GROUP BY day, requested_model, served_model, fallback_reason;
