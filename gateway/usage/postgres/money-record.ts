// Reads the money record of every account from the Postgres ledger (ledger_credits and the usage_daily rollup) in
// one consistent snapshot: what a Redis that lost its data is rebuilt from (gateway/state/money-guard.ts).
import type pg from 'pg';
import type { EntryKind } from '../../state/billing-ledger.ts';
import type { MoneyRecord, SettledSink } from '../../state/money-record.ts';
import { inParallel, PUBLISH_PARALLEL } from '../../state/parallel.ts';
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
// created_at bounds the partitions read (a call lives at most one hold lifetime before it is settled). Read through a
// cursor, FETCH_ROWS at a time, each slice handed on before the next is read: a million ids would otherwise be a
// quarter of a gigabyte in the process, more than a pod's memory limit.
const RECENT_EXPORTED_S = SETTLED_MEMORY_MS / 1000 + 2 * 900;
const RECENT_CREATED_S = RECENT_EXPORTED_S + 2 * 900;
const RECENT = `
DECLARE recent_ids NO SCROLL CURSOR FOR
SELECT account, event_id::text AS id
FROM usage_events
WHERE created_at > now() - make_interval(secs => ${RECENT_CREATED_S}) AND exported_at > now() - make_interval(secs => ${RECENT_EXPORTED_S})
ORDER BY account, created_at`;
/** Rows per FETCH (and so at most per slice handed on). */
export const FETCH_ROWS = 5000;

function blank(account: string): MoneyRecord {
  return { account, trialNano: null, creditIds: [], creditedNano: 0, spentNano: 0, feeNano: 0, spend: {}, stripe: [] };
}

function add(o: Record<string, number>, field: string, n: number): void {
  if (n !== 0) o[field] = (o[field] ?? 0) + n;
}

/**
 * Every account the ledger knows, as of one snapshot; `month` (YYYY-MM) is the month whose spend budgets count. The
 * recent event ids of the same snapshot go to `settled` as they are read, an account's in order, in slices of at most
 * FETCH_ROWS (several slices for a busy account).
 */
export async function readMoneyRecords(pool: pg.Pool, month: string, settled: SettledSink, fetchRows = FETCH_ROWS): Promise<MoneyRecord[]> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const credits = await client.query<{ account: string; kind: string; credit_id: string; amount: string; reference: string; at: string }>(CREDITS);
    const spent = await client.query<{ account: string; cost: string; fee: string }>(SPENT);
    const monthly = await client.query<{ account: string; api_key: string; cost: string; fee: string; hits: string; saved: string }>(MONTH, [`${month}-01`]);
    const recentAccounts = await streamRecent(client, settled, fetchRows);
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
    for (const a of recentAccounts) of(a);
    return [...out.values()].sort((a, b) => a.account.localeCompare(b.account));
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}

/** Hands on the recent ids a slice at a time, grouped by account (the cursor is ordered so); returns the accounts seen. */
async function streamRecent(client: pg.PoolClient, settled: SettledSink, fetchRows: number): Promise<Set<string>> {
  const accounts = new Set<string>();
  // Remembered from now on (settle.lua forgets a settled id settledKeepMs after its score).
  const readAt = Date.now();
  await client.query(RECENT);
  for (;;) {
    const { rows } = await client.query<{ account: string; id: string }>(`FETCH ${fetchRows} FROM recent_ids`);
    const slices: Array<{ account: string; ids: Array<[string, number]> }> = [];
    for (const r of rows) {
      let slice = slices.at(-1);
      if (slice?.account !== r.account) slices.push((slice = { account: r.account, ids: [] }));
      slice.ids.push([r.id, readAt]);
      accounts.add(r.account);
    }
    // Each account once per FETCH: its slices reach `settled` in order, several accounts' at once.
    await inParallel(slices, PUBLISH_PARALLEL, (s) => settled(s.account, s.ids));
    if (rows.length < fetchRows) break;
  }
  await client.query('CLOSE recent_ids');
  return accounts;
}
