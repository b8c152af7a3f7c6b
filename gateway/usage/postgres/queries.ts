// The questions platform teams ask of usage, as the SQL dashboards and docs/operations.md use (a test runs each one
// against the real schema and checks docs/operations.md carries the same text). All read the daily rollup, never the
// raw events, so they stay fast at billions of rows. Days and months are UTC. $1 and $2 bound the days.
export const QUERIES = {
  'spend-by-key': `SELECT day, account, api_key, requests, input_tokens, output_tokens, cost_usd
FROM usage_spend_by_key_daily
WHERE day BETWEEN $1::date AND $2::date
ORDER BY day, cost_usd DESC, account, api_key;`,

  'spend-by-model': `SELECT day, model, requests, fallbacks, input_tokens, output_tokens, cost_usd
FROM usage_spend_by_model_daily
WHERE day BETWEEN $1::date AND $2::date
ORDER BY day, cost_usd DESC, model;`,

  'spend-by-task': `SELECT day, account, coalesce(task_type, '(none)') AS task_type, requests, cost_usd
FROM usage_spend_by_task_daily
WHERE day BETWEEN $1::date AND $2::date
ORDER BY day, cost_usd DESC, account, task_type;`,

  'spend-by-month': `SELECT month, account, api_key, coalesce(task_type, '(none)') AS task_type, model,
       requests, fallbacks, input_tokens, output_tokens, cost_usd
FROM usage_spend_monthly
WHERE month BETWEEN date_trunc('month', $1::date) AND $2::date
ORDER BY month, cost_usd DESC, account, api_key, task_type, model;`,

  'fallback-rate': `SELECT day, requested_model, sum(requests) AS requests, sum(fallbacks) AS fallbacks,
       round(sum(fallbacks)::numeric / nullif(sum(requests), 0), 4) AS fallback_rate
FROM usage_daily
WHERE day BETWEEN $1::date AND $2::date
GROUP BY day, requested_model
ORDER BY day, requested_model;`,

  balances: `SELECT account, (credited_nano / 1e9)::numeric(20, 9) AS credited_usd, (spent_nano / 1e9)::numeric(20, 9) AS spent_usd,
       balance_usd, requests
FROM account_ledger
ORDER BY account;`,
} as const;

export type QueryName = keyof typeof QUERIES;
