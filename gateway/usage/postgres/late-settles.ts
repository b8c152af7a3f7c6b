// The queue of usage events the exporter committed after a Redis rebuild may have read the ledger (usage_late_settles):
// the exporter adds them, the process that rebuilds settles them in Redis and takes them off (gateway/state/late-sweep.ts).
import type pg from 'pg';
import type { LateEvent, LateQueue } from '../../state/late-sweep.ts';
import type { RecentEvent } from '../../state/money-catch-up.ts';

/** Adds events to the queue (one already there is left as it is). */
export async function queueLateSettles(pool: pg.Pool, events: readonly RecentEvent[]): Promise<void> {
  if (events.length === 0) return;
  await pool.query(
    `INSERT INTO usage_late_settles (event_id, account, month, api_key, cost_nano, fee_nano, cache_hit, saved_nano)
     SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::boolean[], $8::bigint[])
     ON CONFLICT (event_id) DO NOTHING`,
    [
      events.map((e) => e.eventId),
      events.map((e) => e.account),
      events.map((e) => e.month),
      events.map((e) => e.keyName),
      events.map((e) => e.costNano),
      events.map((e) => e.feeNano),
      events.map((e) => e.cacheHit),
      events.map((e) => e.savedNano),
    ],
  );
}

/** The queue on the ledger's pool. */
export function lateQueue(pool: pg.Pool): LateQueue {
  return {
    take: async (limit) => {
      const { rows } = await pool.query<{
        event_id: string;
        account: string;
        month: string;
        api_key: string;
        cost: string;
        fee: string;
        cache_hit: boolean;
        saved: string;
        at: string;
      }>(
        `SELECT event_id::text, account, month, api_key, cost_nano::text AS cost, fee_nano::text AS fee, cache_hit,
                saved_nano::text AS saved, (extract(epoch FROM recorded_at) * 1000)::bigint::text AS at
         FROM usage_late_settles ORDER BY recorded_at LIMIT $1`,
        [limit],
      );
      return rows.map((r): LateEvent => ({
        account: r.account,
        eventId: r.event_id,
        month: r.month,
        keyName: r.api_key,
        costNano: r.cost,
        feeNano: r.fee,
        cacheHit: r.cache_hit,
        savedNano: r.saved,
        atMs: Number(r.at),
        queuedAtMs: Number(r.at),
      }));
    },
    done: async (ids) => {
      if (ids.length > 0) await pool.query('DELETE FROM usage_late_settles WHERE event_id = ANY($1::uuid[])', [ids]);
    },
  };
}
