// Payments, refunds and disputes into Postgres ledger_credits (source 'stripe'; SLA credits source 'sla'), copied from the Redis ledger's
// applied entries: every copy inserts all of an account's entries with ON CONFLICT DO NOTHING, so a copy that failed
// (Postgres down) is made whole by the next one, and none is counted twice.
import type pg from 'pg';
import type { AppliedEntry } from '../../state/billing-ledger.ts';

const INSERT = `
INSERT INTO ledger_credits (account, kind, credit_id, amount_nano, source, reference, occurred_at)
SELECT $1, k, id, amt, CASE WHEN k = 'sla' THEN 'sla' ELSE 'stripe' END, ref, to_timestamp(at / 1000.0)
FROM unnest($2::text[], $3::text[], $4::bigint[], $5::text[], $6::bigint[]) AS t(k, id, amt, ref, at)
ON CONFLICT (account, kind, credit_id) DO NOTHING`;

/** Records the account's money entries not recorded yet (entries without money are not ledger rows); returns how many. */
export async function recordBillingEntries(pool: pg.Pool, account: string, entries: readonly AppliedEntry[]): Promise<number> {
  const rows = entries.filter((e) => e.deltaNano !== 0);
  if (rows.length === 0) return 0;
  const r = await pool.query(INSERT, [
    account,
    rows.map((e) => e.kind),
    rows.map((e) => e.eventId),
    rows.map((e) => e.deltaNano),
    rows.map((e) => e.reference),
    rows.map((e) => e.at),
  ]);
  return r.rowCount ?? 0;
}
