// Usage under load and Postgres down, end to end (docs/operations.md: Measured): 3 standalone gateway processes on one Redis, each with DATABASE_URL (so
// each also runs the usage exporter: 3 replicas), mixed traffic on fake upstreams. Every call is one row; tokens
// equal what the upstreams served; costs equal the settled ledger; a Postgres outage under traffic loses nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RedisStore } from '../../gateway/state/redis-store.ts';
import { QUERIES } from '../../gateway/usage/postgres/queries.ts';
import { startFakeUpstream } from '../fakes/upstream.ts';
import { rowCounts, waitFor } from '../helpers/exporter.ts';
import { fleetStore, startFleet, type Fleet } from '../helpers/fleet.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { metricSum, scrape } from '../helpers/prom.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { countBy } from '../helpers/fleet.ts';
import { mixedTraffic, script, servedTokens, trafficManifests, type CallOutcome, type Upstreams } from '../helpers/usage-traffic.ts';

let redis: TestRedis;
let pg: TestPostgres;
let u: Upstreams;
let fleet: Fleet;
let store: RedisStore;
let keys: ReturnType<typeof trafficManifests>['keys'];
const outcomes: CallOutcome[] = [];

beforeAll(async () => {
  const [primary, secondary, backup] = await Promise.all([startFakeUpstream('primary'), startFakeUpstream('secondary'), startFakeUpstream('backup')]);
  u = { primary, secondary, backup };
  script(u);
  [redis, pg] = await Promise.all([startRedis('pipeline'), startPostgres('pipeline', { own: true })]);
  const m = trafficManifests(u);
  keys = m.keys;
  fleet = await startFleet(3, redis, m.docs, { DATABASE_URL: pg.url });
  store = await fleetStore(redis);
}, 120_000);

afterAll(async () => {
  await store?.close();
  await fleet?.stop();
  await Promise.all([redis?.stop(), pg?.stop(), u?.primary.close(), u?.secondary.close(), u?.backup.close()]);
});

/** Settles run after the answer is sent; wait until no hold is open, then until Postgres has every row. */
async function exported(n: number): Promise<void> {
  for (const a of ['acme', 'globex']) await waitFor(async () => (await store.ledger(a)).openHolds === 0, 20_000, `holds of ${a} settled`);
  await waitFor(async () => (await rowCounts(pg.pool)).rows >= n, 60_000, `${n} rows exported`);
  await new Promise((r) => setTimeout(r, 500)); // a duplicate would show up now
}

async function checkAgainstLedger(): Promise<void> {
  const tokens = await pg.pool.query<{ input: string; output: string }>(
    'SELECT sum(input_tokens) AS input, sum(output_tokens) AS output FROM usage_events WHERE status = 200',
  );
  const served = servedTokens(u);
  expect({ input: Number(tokens.rows[0]?.input), output: Number(tokens.rows[0]?.output) }).toEqual(served);
  for (const a of ['acme', 'globex']) {
    const ledger = await store.ledger(a);
    const pgLedger = await pg.pool.query(
      'SELECT credited_nano::bigint AS credited, spent_nano::bigint AS spent, fee_nano::bigint AS fee FROM account_ledger WHERE account = $1',
      [a],
    );
    const raw = await pg.pool.query('SELECT sum(cost_nano)::bigint AS spent FROM usage_events WHERE account = $1', [a]);
    expect(pgLedger.rows[0]).toEqual({ credited: String(ledger.creditedNano), spent: String(ledger.spentNano), fee: String(ledger.feeNano) });
    expect(raw.rows[0]?.spent).toBe(String(ledger.spentNano));
  }
}

describe('usage pipeline: gateways -> Redis Streams -> exporters -> Postgres', () => {
  it('writes exactly one row per call, tokens equal to what the upstreams served, costs equal to the ledger', async () => {
    outcomes.push(...(await mixedTraffic(fleet.urls, keys, 300)));
    await exported(outcomes.length);
    const { rows, distinct } = await rowCounts(pg.pool);
    const byStatus = await pg.pool.query<{ status: number; n: number }>('SELECT status, count(*)::int AS n FROM usage_events GROUP BY status ORDER BY status');
    console.log(
      `case 6 (no fault): ${outcomes.length} calls ${JSON.stringify(countBy(outcomes, (o) => o.status))}; rows ${rows}; missing ${outcomes.length - distinct}; duplicated ${rows - distinct}; by status in Postgres ${JSON.stringify(byStatus.rows)}`,
    );
    expect(rows).toBe(outcomes.length);
    expect(distinct).toBe(rows);
    const fallbacks = await pg.pool.query('SELECT fallback_reason AS reason, count(*)::int AS n FROM usage_events WHERE fallback GROUP BY 1 ORDER BY 1');
    expect(fallbacks.rows.length).toBeGreaterThan(0);
    expect((await pg.pool.query('SELECT 1 FROM usage_events WHERE status = 429')).rowCount).toBeGreaterThan(0);
    expect((await pg.pool.query("SELECT 1 FROM usage_events WHERE error_code = 'client_closed'")).rowCount).toBeGreaterThan(0);
    await checkAgainstLedger();
  });

  it('answers spend by key and by task from the rollup with the sums of the raw events, and /metrics agrees with the rows', async () => {
    const day = new Date().toISOString().slice(0, 10);
    const byKey = await pg.pool.query(QUERIES['spend-by-key'], [day, day]);
    const rawByKey = await pg.pool
      .query(`SELECT account, api_key, count(*)::bigint::text AS requests, (sum(cost_nano)::numeric / 1e9)::numeric(20, 9)::text AS cost_usd
      FROM usage_events GROUP BY 1, 2`);
    expect(
      byKey.rows.map((r: { account: string; api_key: string; requests: string; cost_usd: string }) => ({
        account: r.account,
        api_key: r.api_key,
        requests: r.requests,
        cost_usd: r.cost_usd,
      })),
    ).toEqual(expect.arrayContaining(rawByKey.rows));
    expect(byKey.rows).toHaveLength(rawByKey.rows.length);
    const byTask = await pg.pool.query(QUERIES['spend-by-task'], [day, day]);
    const rawByTask = await pg.pool.query(`SELECT account, coalesce(task_type, '(none)') AS task_type, count(*)::bigint::text AS requests,
      (sum(cost_nano)::numeric / 1e9)::numeric(20, 9)::text AS cost_usd FROM usage_events GROUP BY 1, 2`);
    expect(
      byTask.rows.map((r: { account: string; task_type: string; requests: string; cost_usd: string }) => ({
        account: r.account,
        task_type: r.task_type,
        requests: r.requests,
        cost_usd: r.cost_usd,
      })),
    ).toEqual(expect.arrayContaining(rawByTask.rows));
    expect(byTask.rows).toHaveLength(rawByTask.rows.length);
    // The month's spend per key in Postgres is the store's month spend per key.
    const month = await pg.pool.query<{ api_key: string; cost: string }>(
      'SELECT api_key, sum(cost_nano)::bigint::text AS cost FROM usage_spend_monthly GROUP BY api_key',
    );
    for (const r of month.rows) {
      const acct = r.api_key === 'b1' || r.api_key === 'limited' ? 'globex' : 'acme';
      const view = await store.view(acct, r.api_key, Date.now());
      expect(r.cost).toBe(String(view.keyMonthSpendNano));
    }
    const texts = await Promise.all(fleet.metricsUrls.map(scrape));
    const rows = (await rowCounts(pg.pool)).rows;
    expect(texts.reduce((a, t) => a + metricSum(t, 'svc_exporter_rows_written_total'), 0)).toBe(rows);
    expect(texts.reduce((a, t) => a + metricSum(t, 'svc_gateway_requests_total'), 0)).toBe(rows);
    expect(texts.reduce((a, t) => a + metricSum(t, 'svc_exporter_dead_letters_total'), 0)).toBe(0);
    expect(texts.reduce((a, t) => a + metricSum(t, 'svc_exporter_lost_entries_total'), 0)).toBe(0);
  });

  it('keeps serving while Postgres is down, and after it returns no row is missing or duplicated', async () => {
    const before = outcomes.length;
    await pg.stopServer();
    const during = await mixedTraffic(fleet.urls, keys, 150);
    outcomes.push(...during);
    await new Promise((r) => setTimeout(r, 1500)); // exporters retry against the dead server meanwhile
    const errorsDuring = (await Promise.all(fleet.metricsUrls.map(scrape))).reduce(
      (a, t) => a + metricSum(t, 'svc_exporter_errors_total', { stage: 'write' }),
      0,
    );
    await pg.startServer();
    await exported(outcomes.length);
    const { rows, distinct } = await rowCounts(pg.pool);
    const failedDuring = during.filter((o) => o.status === 503 || o.status === 500).length;
    console.log(
      `case 7 (Postgres down): ${during.length} calls while down ${JSON.stringify(countBy(during, (o) => o.status))}; failed because of Postgres ${failedDuring}; exporter write errors ${errorsDuring}; rows ${rows} of ${outcomes.length}; missing ${outcomes.length - distinct}; duplicated ${rows - distinct}`,
    );
    expect(failedDuring).toBe(0);
    expect(during.filter((o) => ![200, 400, 429, 499, 502].includes(o.status))).toEqual([]);
    expect(outcomes.length).toBe(before + during.length);
    expect(rows).toBe(outcomes.length);
    expect(distinct).toBe(rows);
    await checkAgainstLedger();
  });
});
