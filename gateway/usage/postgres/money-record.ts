// Reads the money record of every account from the Postgres ledger (ledger_credits and the usage_daily rollup) in
// one consistent snapshot: what a Redis that lost its data is rebuilt from (gateway/state/money-guard.ts).
import type pg from 'pg';
import type { EntryKind } from '../../state/billing-ledger.ts';
import type { MoneyRecord } from '../../state/money-record.ts';
import { SETTLED_MEMORY_MS } from '../../state/store.ts';

const CREDITS = `
SELECT account, kind, credit_id, amount_nano::text AS amount, coalesce(reference, '') AS reference,
       coalesce((extract(epoch FROM occurred_at) * 1000)::bigint, 0)::text AS at
FROM ledger_credits ORDER BY account, coalesce(occurred_at, recorded_at), recorded_at, credit_id`;

const SPENT = `SELECT account, sum(cost_nano)::text AS cost, sum(fee_nano)::text AS fee FROM usage_daily GROUP BY account`;

// This month (UTC) per key; the account's month is their sum. $1 the month's first day.
const MONTH = `
SELECT account, api_key, sum(cost_nano)::text AS cost, sum(fee_nano)::text AS fee,
       sum(cache_hits)::text AS hits, sum(cache_saved_nano)::text AS saved
FROM usage_daily WHERE day >= $1::date AND day < ($1::date + interval '1 month') GROUP BY account, api_key`;

// The events recorded lately, remembered as settled by the restore (a settle applied just before the loss and retried
// after the rebuild is then a no-op). A settle is retried for at most a hold's lifetime (SVC_HOLD_TTL_SECONDS, 900 by
// default) after it failed, so events exported within SETTLED_MEMORY_MS plus twice the default hold lifetime are kept;
// created_at bounds the partitions read (a call lives at most one hold lifetime before it is settled).
const RECENT = `
SELECT account, event_id::text AS id
FROM usage_events
WHERE created_at > now() - make_interval(secs => $1) AND exported_at > now() - make_interval(secs => $2)
ORDER BY account, created_at`;
const RECENT_EXPORTED_S = SETTLED_MEMORY_MS / 1000 + 2 * 900;
const RECENT_CREATED_S = RECENT_EXPORTED_S + 2 * 900;

function blank(account: string): MoneyRecord {
  return { account, trialNano: null, creditIds: [], creditedNano: 0, spentNano: 0, feeNano: 0, spend: {}, stripe: [], settled: [] };
}

function add(o: Record<string, number>, field: string, n: number): void {
  if (n !== 0) o[field] = (o[field] ?? 0) + n;
}

/** Every account the ledger knows, as of one snapshot; `month` (YYYY-MM) is the month whose spend budgets count. */
export async function readMoneyRecords(pool: pg.Pool, month: string): Promise<MoneyRecord[]> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const credits = await client.query<{ account: string; kind: string; credit_id: string; amount: string; reference: string; at: string }>(CREDITS);
    const spent = await client.query<{ account: string; cost: string; fee: string }>(SPENT);
    const monthly = await client.query<{ account: string; api_key: string; cost: string; fee: string; hits: string; saved: string }>(MONTH, [`${month}-01`]);
    const recent = await client.query<{ account: string; id: string }>(RECENT, [RECENT_CREATED_S, RECENT_EXPORTED_S]);
    await client.query('COMMIT');
    const out = new Map<string, MoneyRecord>();
    const of = (a: string): MoneyRecord => {
      let r = out.get(a);
      if (!r) out.set(a, (r = blank(a)));
      return r;
    };
    for (const row of credits.rows) {
      const r = of(row.account);
      const amount = Number(row.amount);
      r.creditedNano += amount;
      if (row.kind === 'trial') r.trialNano = amount;
      else if (row.kind === 'credit') r.creditIds.push(row.credit_id);
      else r.stripe.push({ kind: row.kind as EntryKind, eventId: row.credit_id, reference: row.reference, amountNano: amount, at: Number(row.at) });
    }
    for (const row of spent.rows) {
      const r = of(row.account);
      r.spentNano = Number(row.cost);
      r.feeNano = Number(row.fee);
    }
    for (const row of monthly.rows) {
      const s = of(row.account).spend;
      const [cost, fee, hits, saved] = [row.cost, row.fee, row.hits, row.saved].map(Number) as [number, number, number, number];
      add(s, month, cost);
      add(s, `${month}|${row.api_key}`, cost);
      add(s, `fee:${month}`, fee);
      add(s, `hits:${month}`, hits);
      add(s, `hits:${month}|${row.api_key}`, hits);
      add(s, `saved:${month}`, saved);
      add(s, `saved:${month}|${row.api_key}`, saved);
    }
    // Remembered from now on (settle.lua forgets a settled id settledKeepMs after its score).
    const readAt = Date.now();
    for (const row of recent.rows) of(row.account).settled.push([row.id, readAt]);
    return [...out.values()].sort((a, b) => a.account.localeCompare(b.account));
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}
