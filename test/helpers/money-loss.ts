// Steady callers and the Postgres ledger's view of one account, for the tests of a Redis that loses its data
// (test/billing/redis-loss*.test.ts).
import type pg from 'pg';
import { chat, type CallResult } from './fleet.ts';
import { metricSum, scrape } from './prom.ts';

export interface Served extends CallResult {
  endedAt: number;
  what: 'chat' | 'me';
}

/** Callers in a loop over `urls` (a /v1/me every fourth call) until `stop()`. */
export function steadyLoad(urls: () => string[], key: string, callers: number): { results: Served[]; stop: () => Promise<void> } {
  const results: Served[] = [];
  let running = true;
  const loops = Array.from({ length: callers }, async (_, c) => {
    for (let i = 0; running; i++) {
      const all = urls();
      const url = all[(c + i) % all.length] as string;
      const startedAt = Date.now();
      if (i % 4 === 3) {
        const res = await fetch(`${url}/v1/me`, { headers: { authorization: `Bearer ${key}` } });
        const body = await res.text();
        results.push({
          what: 'me',
          status: res.status,
          retryAfter: res.headers.get('retry-after'),
          startedAt,
          ms: Date.now() - startedAt,
          body,
          endedAt: Date.now(),
        });
      } else {
        results.push({ what: 'chat', ...(await chat(url, key)), endedAt: Date.now() });
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  });
  return {
    results,
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}

export interface LedgerView {
  credits: Array<{ kind: string; credit_id: string; amount_nano: string }>;
  /** Charged calls (status 200) and their cost. */
  rows: number;
  spent: number;
  /** This month's spend of the key. */
  keyMonth: number;
}

export async function ledgerOf(pool: pg.Pool, account: string, key: string): Promise<LedgerView> {
  const credits = await pool.query<{ kind: string; credit_id: string; amount_nano: string }>(
    'SELECT kind, credit_id, amount_nano::text FROM ledger_credits WHERE account = $1 ORDER BY kind, credit_id',
    [account],
  );
  const ev = await pool.query<{ n: string; cost: string }>(
    'SELECT count(*)::text AS n, coalesce(sum(cost_nano), 0)::text AS cost FROM usage_events WHERE account = $1 AND status = 200',
    [account],
  );
  const month = await pool.query<{ cost: string }>(
    "SELECT coalesce(sum(cost_nano), 0)::text AS cost FROM usage_daily WHERE account = $1 AND api_key = $2 AND day >= date_trunc('month', now() AT TIME ZONE 'UTC')::date",
    [account, key],
  );
  return { credits: credits.rows, rows: Number(ev.rows[0]?.n), spent: Number(ev.rows[0]?.cost), keyMonth: Number(month.rows[0]?.cost) };
}

/**
 * True once no gateway (their metrics ports) holds a settlement waiting for Redis: a call answered around the loss is
 * charged when its retried settle lands, so the money is final only then (`svc_gateway_settles_pending`).
 */
export async function settlesDrained(metricsUrls: readonly string[]): Promise<boolean> {
  const pending = await Promise.all(metricsUrls.map(async (u) => metricSum(await scrape(u), 'svc_gateway_settles_pending')));
  return pending.every((n) => n === 0);
}
