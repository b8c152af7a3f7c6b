// The statements a batch commits: events inserted idempotently, the daily rollup grown by exactly the rows that
// were new (RETURNING of ON CONFLICT DO NOTHING), and dead letters parked once.
import type { UsageEvent } from '../event.ts';
import { KIND_SQL } from '../kind.ts';

const COLUMNS: Array<[string, string, (e: UsageEvent) => unknown]> = [
  ['event_id', 'uuid', (e) => e.eventId],
  ['created_at', 'timestamptz', (e) => e.createdAt],
  ['account', 'text', (e) => e.account],
  ['api_key', 'text', (e) => e.apiKey],
  ['task_type', 'text', (e) => e.taskType],
  ['endpoint', 'text', (e) => e.endpoint],
  ['requested_model', 'text', (e) => e.requestedModel],
  ['served_model', 'text', (e) => e.servedModel],
  ['upstream', 'text', (e) => e.upstream],
  ['fallback', 'boolean', (e) => e.fallback],
  ['fallback_reason', 'text', (e) => e.fallbackReason],
  ['status', 'smallint', (e) => e.status],
  ['error_code', 'text', (e) => e.errorCode],
  ['stream', 'boolean', (e) => e.stream],
  ['input_tokens', 'integer', (e) => e.inputTokens],
  ['output_tokens', 'integer', (e) => e.outputTokens],
  ['cache_read_tokens', 'integer', (e) => e.cacheReadTokens],
  ['cache_write_tokens', 'integer', (e) => e.cacheWriteTokens],
  ['cost_nano', 'bigint', (e) => e.costNano],
  ['fee_nano', 'bigint', (e) => e.feeNano],
  ['latency_ms', 'integer', (e) => e.latencyMs],
  ['ttft_ms', 'integer', (e) => e.ttftMs],
  ['dropped_tools', 'text', (e) => (e.droppedTools && e.droppedTools.length > 0 ? e.droppedTools.join(',') : null)],
  ['usage_estimated', 'boolean', (e) => e.usageEstimated ?? false],
  ['usage_clamped', 'boolean', (e) => e.usageClamped ?? false],
  ['cache', 'text', (e) => e.cache ?? null],
  ['cache_saved_nano', 'bigint', (e) => e.cacheSavedNano ?? 0],
  ['billed_unit', 'text', (e) => e.unit ?? null],
  ['billed_units', 'bigint', (e) => e.units ?? 0],
  ['guardrail_cost_nano', 'bigint', (e) => e.guardrailCostNano ?? 0],
  ['guardrails', 'jsonb', (e) => (e.guardrails && e.guardrails.length > 0 ? JSON.stringify(e.guardrails) : null)],
  ['batch', 'boolean', (e) => e.batch ?? false],
];

const names = COLUMNS.map(([n]) => n).join(', ');
const arrays = COLUMNS.map(([, type], i) => `$${i + 1}::${type}[]`).join(', ');
const ROLLUP_KEY = 'day, account, api_key, task_type, requested_model, served_model, fallback_reason, kind';
const SUMS = [
  'requests',
  'errors',
  'fallbacks',
  'input_tokens',
  'output_tokens',
  'cache_read_tokens',
  'cache_write_tokens',
  'cost_nano',
  'fee_nano',
  'latency_ms_sum',
  'cache_hits',
  'cache_saved_nano',
  'billed_seconds',
  'billed_characters',
  'batch_requests',
  'batch_cost_nano',
  'billed_images',
];

export const INSERT_EVENTS = `
WITH input AS (
  SELECT * FROM unnest(${arrays}) AS t(${names})
), ins AS (
  INSERT INTO usage_events (${names}) SELECT ${names} FROM input
  ON CONFLICT DO NOTHING
  RETURNING event_id, created_at, account, api_key, task_type, endpoint, requested_model, served_model, fallback, fallback_reason, status,
            input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_nano, fee_nano, latency_ms,
            cache, cache_saved_nano, billed_unit, billed_units, batch
), roll AS (
  INSERT INTO usage_daily AS d (${ROLLUP_KEY}, ${SUMS.join(', ')})
  SELECT (created_at AT TIME ZONE 'UTC')::date, account, api_key, coalesce(task_type, ''), requested_model,
         coalesce(served_model, ''), coalesce(fallback_reason, ''), ${KIND_SQL},
         count(*), count(*) FILTER (WHERE status >= 400), count(*) FILTER (WHERE fallback),
         sum(input_tokens), sum(output_tokens), sum(cache_read_tokens), sum(cache_write_tokens),
         sum(cost_nano), sum(fee_nano), sum(latency_ms),
         count(*) FILTER (WHERE cache = 'hit'), sum(cache_saved_nano),
         coalesce(sum(billed_units) FILTER (WHERE billed_unit = 'seconds'), 0),
         coalesce(sum(billed_units) FILTER (WHERE billed_unit = 'characters'), 0),
         count(*) FILTER (WHERE batch), coalesce(sum(cost_nano) FILTER (WHERE batch), 0),
         coalesce(sum(billed_units) FILTER (WHERE billed_unit = 'images'), 0)
  FROM ins GROUP BY 1, 2, 3, 4, 5, 6, 7, 8
  ORDER BY 1, 2, 3, 4, 5, 6, 7, 8  -- one lock order for every writer: concurrent batches cannot deadlock here
  ON CONFLICT (${ROLLUP_KEY}) DO UPDATE SET ${SUMS.map((s) => `${s} = d.${s} + excluded.${s}`).join(', ')}
  RETURNING 1
)
SELECT (SELECT count(*) FROM ins)::integer AS inserted, coalesce((SELECT array_agg(event_id::text) FROM ins), '{}') AS ids`;

/** One parameter array per column, in COLUMNS order. */
export function eventParams(events: readonly UsageEvent[]): unknown[][] {
  return COLUMNS.map(([, , get]) => events.map(get));
}

export const INSERT_DEAD_LETTERS = `
INSERT INTO usage_dead_letters (source, entry_id, event_id, reason, detail, payload)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[])
ON CONFLICT (source, entry_id) DO NOTHING
RETURNING reason`;
