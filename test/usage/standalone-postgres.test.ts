// Standalone without Redis (in-memory store) and DATABASE_URL: usage goes to Postgres through a bounded in-memory
// queue. Every call one row, a Postgres outage rides on the queue, SIGTERM flushes it; the documented limit of
// memory mode (a SIGKILL loses what is still queued) is measured, not hidden.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream } from '../fakes/upstream.ts';
import { rowCounts, waitFor } from '../helpers/exporter.ts';
import { countBy, writeManifests } from '../helpers/fleet.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';
import { metricSum, scrape } from '../helpers/prom.ts';
import { mixedTraffic, script, servedTokens, trafficManifests, type CallOutcome, type Upstreams } from '../helpers/usage-traffic.ts';

let db: TestPostgres;
let u: Upstreams;
let config: string;
let keys: ReturnType<typeof trafficManifests>['keys'];
let gw: GatewayProcess;
const calls: CallOutcome[] = [];

beforeAll(async () => {
  const [primary, secondary, backup] = await Promise.all([startFakeUpstream('primary'), startFakeUpstream('secondary'), startFakeUpstream('backup')]);
  u = { primary, secondary, backup };
  script(u);
  db = await startPostgres('standalone_pg', { own: true });
  const m = trafficManifests(u);
  keys = m.keys;
  config = writeManifests(m.docs);
  gw = await startGatewayProcess({ SVC_CONFIG: config, DATABASE_URL: db.url });
}, 120_000);

afterAll(async () => {
  await gw?.stop();
  await Promise.all([db?.stop(), u?.primary.close(), u?.secondary.close(), u?.backup.close()]);
});

async function meSpend(url: string, key: string): Promise<number> {
  const body = (await (await fetch(`${url}/v1/me`, { headers: { authorization: `Bearer ${key}` } })).json()) as { month_spend_usd: number };
  return body.month_spend_usd;
}

describe('standalone gateway with DATABASE_URL and the in-memory store', () => {
  it("writes one row per call; tokens equal what was served; spend equals the store's", async () => {
    calls.push(...(await mixedTraffic([gw.url], keys, 120)));
    await waitFor(async () => (await rowCounts(db.pool)).rows >= calls.length, 30_000, 'rows written');
    const { rows, distinct } = await rowCounts(db.pool);
    console.log(
      `memory mode: ${calls.length} calls ${JSON.stringify(countBy(calls, (c) => c.status))}; rows ${rows}; missing ${calls.length - distinct}; duplicated ${rows - distinct}`,
    );
    expect(rows).toBe(calls.length);
    expect(distinct).toBe(rows);
    const t = await db.pool.query<{ input: string; output: string }>(
      'SELECT sum(input_tokens) AS input, sum(output_tokens) AS output FROM usage_events WHERE status = 200',
    );
    expect({ input: Number(t.rows[0]?.input), output: Number(t.rows[0]?.output) }).toEqual(servedTokens(u));
    for (const k of ['a1', 'a2', 'b1'] as const) {
      const r = await db.pool.query<{ usd: string }>('SELECT (coalesce(sum(cost_nano), 0) / 1e9)::text AS usd FROM usage_events WHERE api_key = $1', [k]);
      expect(Number(r.rows[0]?.usd)).toBe(await meSpend(gw.url, keys[k]));
    }
    const credits = await db.pool.query('SELECT account, kind, credit_id, amount_nano::text FROM ledger_credits ORDER BY 1, 2, 3');
    expect(credits.rows).toEqual([
      { account: 'acme', kind: 'credit', credit_id: 'po-1', amount_nano: '100000000000' },
      { account: 'acme', kind: 'trial', credit_id: '', amount_nano: '50000000000' },
      { account: 'globex', kind: 'trial', credit_id: '', amount_nano: '20000000000' },
    ]);
    expect(metricSum(await scrape(gw.metricsUrl), 'svc_gateway_usage_rows_written_total')).toBe(rows);
  });

  it('keeps serving while Postgres is down; the queue catches up after, losing nothing', async () => {
    await db.stopServer();
    const during = await mixedTraffic([gw.url], keys, 60);
    calls.push(...during);
    const queued = metricSum(await scrape(gw.metricsUrl), 'svc_gateway_usage_queue_events');
    await db.startServer();
    await waitFor(async () => (await rowCounts(db.pool)).rows >= calls.length, 30_000, 'queue drained');
    const { rows, distinct } = await rowCounts(db.pool);
    console.log(
      `memory mode, Postgres down: ${during.length} calls ${JSON.stringify(countBy(during, (c) => c.status))}; queued ${queued}; rows ${rows} of ${calls.length}; missing ${calls.length - distinct}; duplicated ${rows - distinct}`,
    );
    expect(during.filter((c) => ![200, 400, 429, 499, 502].includes(c.status))).toEqual([]);
    expect(queued).toBeGreaterThan(0);
    expect(rows).toBe(calls.length);
    expect(distinct).toBe(rows);
  });

  it('flushes the queue on SIGTERM', async () => {
    await db.stopServer();
    calls.push(...(await mixedTraffic([gw.url], keys, 30)));
    const stopped = gw.stop();
    await new Promise((r) => setTimeout(r, 300));
    await db.startServer();
    expect(await stopped).toBe(0);
    const { rows, distinct } = await rowCounts(db.pool);
    console.log(`memory mode, SIGTERM with a queue: rows ${rows} of ${calls.length}; missing ${calls.length - distinct}`);
    expect(rows).toBe(calls.length);
    expect(distinct).toBe(rows);
  });

  it('documented limit: a SIGKILL loses the events still queued (REDIS_URL removes this limit)', async () => {
    const victim = await startGatewayProcess({ SVC_CONFIG: config, DATABASE_URL: db.url });
    await db.stopServer();
    const lostCalls = await mixedTraffic([victim.url], keys, 20);
    const queued = metricSum(await scrape(victim.metricsUrl), 'svc_gateway_usage_queue_events');
    const exited = new Promise((r) => victim.child.once('exit', r));
    victim.child.kill('SIGKILL');
    await exited;
    await db.startServer();
    const { rows } = await rowCounts(db.pool);
    console.log(
      `memory mode, SIGKILL with a queue: ${lostCalls.length} calls; queued at the kill ${queued}; rows lost ${calls.length + lostCalls.length - rows} (documented limit)`,
    );
    expect(calls.length + lostCalls.length - rows).toBe(queued);
  });
});
