// Usage from Postgres: one GROUP BY over the daily rollup (usage_daily), never the raw events, so a page stays fast
// at a billion rows. The same grouping as the memory source: '' task -> (untagged), model = served else requested,
// kind by its label; a rerank's output count is search units; audio seconds, characters, images and batch lines
// (migration 017) come from their own rollup columns.
import type pg from 'pg';
import { KIND_LABELS } from '../../gateway/usage/kind.ts';
import { GUARDRAIL_ROWS_SQL, sortRows, type GuardrailQuery, type GuardrailRow } from './guardrails.ts';
import { UNTAGGED, type Cell, type GroupBy, type UsageQuery, type UsageSource } from './report.ts';

const GROUP_SQL: Record<GroupBy, string> = {
  key: 'api_key',
  task: `CASE WHEN task_type = '' THEN '${UNTAGGED}' ELSE task_type END`,
  model: `CASE WHEN served_model = '' THEN requested_model ELSE served_model END`,
  kind: 'kind',
};

export class PostgresUsageSource implements UsageSource {
  private readonly pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  async cells(q: UsageQuery): Promise<Cell[]> {
    const sql = `SELECT to_char(day, 'YYYY-MM-DD') AS day, ${GROUP_SQL[q.groupBy]} AS grp,
       sum(requests)::text AS requests, sum(errors)::text AS errors, sum(fallbacks)::text AS fallbacks,
       sum(input_tokens)::text AS input_tokens,
       coalesce(sum(output_tokens) FILTER (WHERE kind <> 'rerank'), 0)::text AS output_tokens,
       coalesce(sum(output_tokens) FILTER (WHERE kind = 'rerank'), 0)::text AS search_units, sum(cost_nano)::text AS cost_nano,
       sum(cache_hits)::text AS cache_hits, sum(cache_saved_nano)::text AS cache_saved_nano,
       sum(billed_seconds)::text AS audio_seconds, sum(billed_characters)::text AS characters, sum(billed_images)::text AS images,
       sum(batch_requests)::text AS batch_requests, sum(batch_cost_nano)::text AS batch_cost_nano
FROM usage_daily
WHERE account = ANY($1::text[]) AND day BETWEEN $2::date AND $3::date
GROUP BY 1, 2`;
    const r = await this.pool.query<Record<string, string>>(sql, [q.accounts, q.from, q.to]);
    return r.rows.map((x) => ({
      day: x.day as string,
      group: q.groupBy === 'kind' ? (KIND_LABELS[x.grp as keyof typeof KIND_LABELS] ?? (x.grp as string)) : (x.grp as string),
      requests: Number(x.requests),
      errors: Number(x.errors),
      fallbacks: Number(x.fallbacks),
      inputTokens: Number(x.input_tokens),
      outputTokens: Number(x.output_tokens),
      searchUnits: Number(x.search_units),
      costNano: Number(x.cost_nano),
      cacheHits: Number(x.cache_hits),
      cacheSavedNano: Number(x.cache_saved_nano),
      audioSeconds: Number(x.audio_seconds),
      characters: Number(x.characters),
      images: Number(x.images),
      batchRequests: Number(x.batch_requests),
      batchCostNano: Number(x.batch_cost_nano),
    }));
  }

  async guardrails(q: GuardrailQuery): Promise<GuardrailRow[]> {
    const r = await this.pool.query<Record<string, string>>(GUARDRAIL_ROWS_SQL, [q.accounts, q.from, q.to]);
    return sortRows(
      r.rows.map((x) => ({
        key: x.key as string,
        guardrail: x.guardrail as string,
        calls: Number(x.calls),
        blocked: Number(x.blocked),
        masked: Number(x.masked),
        logged: Number(x.logged),
      })),
    );
  }
}
