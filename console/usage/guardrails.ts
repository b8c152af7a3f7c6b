// The guardrails' part in an account's usage: per key and guardrail, the calls a check matched, the calls blocked,
// the values masked and the matches only logged, from the usage events' `guardrails` facts (never the text).
import type { UsageEvent } from '../../gateway/usage/event.ts';

export interface GuardrailRow {
  key: string;
  guardrail: string;
  /** Calls on which one of the guardrail's checks matched. */
  calls: number;
  /** Calls it blocked (a blocked call costs nothing). */
  blocked: number;
  /** Values it masked, and matches it only logged. */
  masked: number;
  logged: number;
}

/** The accounts and inclusive UTC days (YYYY-MM-DD) a usage report covers, without its grouping. */
export interface GuardrailQuery {
  accounts: string[];
  from: string;
  to: string;
}

/** Sorted by key, then guardrail. */
export function guardrailRows(events: Iterable<UsageEvent>, q: GuardrailQuery): GuardrailRow[] {
  const accounts = new Set(q.accounts);
  const rows = new Map<string, GuardrailRow>();
  for (const e of events) {
    const day = e.createdAt.slice(0, 10);
    if (!e.guardrails || !accounts.has(e.account) || day < q.from || day > q.to) continue;
    const seen = new Set<string>();
    for (const f of e.guardrails) {
      const id = `${e.apiKey}\u0000${f.guardrail}`;
      let r = rows.get(id);
      if (!r) rows.set(id, (r = { key: e.apiKey, guardrail: f.guardrail, calls: 0, blocked: 0, masked: 0, logged: 0 }));
      if (!seen.has(id)) r.calls += 1;
      if (f.action === 'block' && !seen.has(`${id}\u0000block`)) r.blocked += 1;
      if (f.action === 'mask') r.masked += f.count;
      if (f.action === 'log') r.logged += f.count;
      seen.add(id);
      if (f.action === 'block') seen.add(`${id}\u0000block`);
    }
  }
  return sortRows([...rows.values()]);
}

export function sortRows(rows: GuardrailRow[]): GuardrailRow[] {
  return rows.sort((a, b) => (a.key === b.key ? (a.guardrail < b.guardrail ? -1 : 1) : a.key < b.key ? -1 : 1));
}

/** From Postgres: the calls a guardrail touched only (the partial index of migration 015), grouped there. */
export const GUARDRAIL_ROWS_SQL = `SELECT e.api_key AS key, f->>'guardrail' AS guardrail,
       count(DISTINCT e.event_id)::text AS calls,
       count(DISTINCT e.event_id) FILTER (WHERE f->>'action' = 'block')::text AS blocked,
       coalesce(sum((f->>'count')::bigint) FILTER (WHERE f->>'action' = 'mask'), 0)::text AS masked,
       coalesce(sum((f->>'count')::bigint) FILTER (WHERE f->>'action' = 'log'), 0)::text AS logged
FROM usage_events e CROSS JOIN LATERAL jsonb_array_elements(e.guardrails) AS f
WHERE e.guardrails IS NOT NULL AND e.account = ANY($1::text[])
  AND e.created_at >= $2::date AND e.created_at < $3::date + 1
GROUP BY 1, 2`;
