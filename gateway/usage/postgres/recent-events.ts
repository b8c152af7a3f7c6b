// The ledger's recent usage events of some accounts: what a replica promoted on a Redis Cluster may never have
// settled (gateway/state/money-catch-up.ts). Only events a node still remembers settling are read (created within
// SETTLED_MEMORY_MS): an older settle cannot be told missing from forgotten.
import type pg from 'pg';
import type { RecentEvent } from '../../state/money-catch-up.ts';
import { monthOf, SETTLED_MEMORY_MS } from '../../state/store.ts';

const RECENT = `
SELECT account, event_id::text AS id, (extract(epoch FROM created_at) * 1000)::bigint::text AS at, api_key,
       cost_nano::text AS cost, fee_nano::text AS fee, coalesce(cache = 'hit', false) AS hit, cache_saved_nano::text AS saved
FROM usage_events
WHERE account = ANY($1::text[]) AND created_at > now() - make_interval(secs => $2)
ORDER BY created_at`;

export async function readRecentEvents(pool: pg.Pool, accounts: readonly string[]): Promise<RecentEvent[]> {
  const rows = await pool.query<{ account: string; id: string; at: string; api_key: string; cost: string; fee: string; hit: boolean; saved: string }>(RECENT, [
    accounts,
    SETTLED_MEMORY_MS / 1000,
  ]);
  return rows.rows.map((r) => ({
    account: r.account,
    eventId: r.id,
    month: monthOf(Number(r.at)),
    keyName: r.api_key,
    costNano: r.cost,
    feeNano: r.fee,
    cacheHit: r.hit,
    savedNano: r.saved,
    atMs: Number(r.at),
  }));
}
