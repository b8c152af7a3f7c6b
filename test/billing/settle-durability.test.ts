// SVC_SETTLE_DURABILITY=postgres (docs/operations.md: Redis lost its data, what is at risk): every call's usage event
// is in the Postgres ledger by the time its answer ends (a stream: when its final event arrives), so a Redis killed
// and restarted empty right after calls answered 200 loses none of them: each is in the ledger once, and the balance
// rebuilt from the ledger counts them. Postgres away: calls still answer, their events wait in Redis for the exporter,
// and each lands in the ledger exactly once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NANO_PER_USD } from '../../gateway/contract/money.ts';
import { RedisStore } from '../../gateway/state/redis-store.ts';
import { chat, fleetStore, me, startFleet, type Fleet } from '../helpers/fleet.ts';
import { ledgerOf } from '../helpers/money-loss.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { metricSum, scrape } from '../helpers/prom.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { until } from '../helpers/until.ts';
import { docExample } from '../helpers/docs.ts';
import { setup } from './fixtures.ts';

const s = setup([{ name: 'acme', spec: { trialCreditUsd: 1, credits: [{ id: 'topup-1', amountUsd: 10 }] } }], [{ name: 'k', account: 'acme' }]);
const key = s.keys.k as string;
let redis: TestRedis;
let pg: TestPostgres;
let fleet: Fleet;
let store: RedisStore;

beforeAll(async () => {
  redis = await startRedis('durable', { own: true }); // no persistence: a restart comes back empty
  pg = await startPostgres('durable');
  // The settings as docs/operations.md shows them, DATABASE_URL pointed at this test's Postgres.
  const documented = Object.fromEntries(
    docExample('docs/operations.md', 'settle-durability')
      .trim()
      .split('\n')
      .map((l) => l.split(/=(.*)/s).slice(0, 2) as [string, string]),
  );
  expect(documented.SVC_SETTLE_DURABILITY).toBe('postgres');
  fleet = await startFleet(1, redis, s.docs, { ...documented, DATABASE_URL: pg.url, SVC_REDIS_TIMEOUT_MS: '300' });
  store = await fleetStore(redis);
}, 60_000);

afterAll(async () => {
  await store?.close();
  await fleet?.stop();
  await redis?.stop();
  await pg?.stop();
});

/** Charged calls (status 200) of acme in usage_events, and event ids present more than once (must be none). */
async function ledgerRows(): Promise<{ rows: number; doubled: number }> {
  const r = await pg.pool.query<{ rows: number; doubled: number }>(
    `SELECT count(*)::int AS rows, (count(*) - count(DISTINCT event_id))::int AS doubled FROM usage_events WHERE account = 'acme' AND status = 200`,
  );
  return r.rows[0] as { rows: number; doubled: number };
}

/** A streamed call read event by event: the ledger's row count at the moment its final event ([DONE]) arrived. */
async function streamedCall(url: string): Promise<{ status: number; rowsAtDone: number }> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'mock-fast', messages: [{ role: 'user', content: 'Hello there' }], max_tokens: 50, stream: true }),
  });
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = '';
  let rowsAtDone = -1;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    if (rowsAtDone < 0 && text.includes('data: [DONE]')) rowsAtDone = (await ledgerRows()).rows;
  }
  return { status: res.status, rowsAtDone };
}

describe('SVC_SETTLE_DURABILITY=postgres', () => {
  it('has every answered call in the ledger before its answer ends; Redis restarted empty right after loses none', async () => {
    const url = fleet.urls[0] as string;
    await until(async () => (await ledgerOf(pg.pool, 'acme', 'k')).credits.length === 2, 20_000, 'credits recorded in Postgres');
    let answered = 0;
    for (let i = 0; i < 12; i++) {
      if (i % 3 === 2) {
        const r = await streamedCall(url);
        expect(r.status).toBe(200);
        answered++;
        expect(r.rowsAtDone).toBe(answered); // in the ledger when the stream's final event came
      } else {
        const r = await chat(url, key);
        expect(r.status, r.body).toBe(200);
        answered++;
        expect((await ledgerRows()).rows).toBe(answered); // in the ledger when the answer came, not 200 ms later
      }
    }
    // Redis loses its data right after the last answer: the exporter had no time to copy anything since.
    await redis.kill();
    await redis.restart();
    await until(async () => (await chat(url, key)).status === 200, 60_000, 'served again after the rebuild');
    answered++;
    await until(async () => (await store.ledger('acme')).openHolds === 0, 20_000, 'holds settled');

    const rows = await ledgerRows();
    expect(rows).toEqual({ rows: answered, doubled: 0 }); // every answered call, once
    const record = await ledgerOf(pg.pool, 'acme', 'k');
    const ledger = await store.ledger('acme');
    expect(ledger.creditedNano).toBe(11 * NANO_PER_USD); // the trial and the credit once
    expect(ledger.spentNano).toBe(record.spent); // the rebuilt balance counts every call
    expect((await store.view('acme', 'k', Date.now())).keyMonthSpendNano).toBe(record.keyMonth);
    expect((await me(url, key)).body).toMatchObject({ balance_usd: (11 * NANO_PER_USD - record.spent) / NANO_PER_USD });
    const metrics = await scrape(fleet.procs[0]?.metricsUrl as string);
    // Written by the gateway before answering (or, rarely, by the exporter first, between Redis's settle and this write).
    const durable = (result: string): number => metricSum(metrics, 'svc_gateway_settle_durable_total', { result });
    expect(durable('written') + durable('duplicate')).toBeGreaterThanOrEqual(answered);
    expect(durable('failed') + durable('skipped')).toBe(0);
    // The exporter's later copy of the same events added nothing (exactly once by event id).
    await until(
      async () => metricSum(await scrape(fleet.procs[0]?.metricsUrl as string), 'svc_exporter_duplicates_total') >= 1,
      20_000,
      'the exporter saw a copy',
    );
    expect(await ledgerRows()).toEqual({ rows: answered, doubled: 0 });
  }, 240_000);

  it('answers while Postgres is away; those events reach the ledger once, through the exporter', async () => {
    const url = fleet.urls[0] as string;
    const before = await ledgerRows();
    await pg.stopServer();
    let served = 0;
    try {
      for (let i = 0; i < 3; i++) {
        const r = await chat(url, key);
        expect(r.status, r.body).toBe(200); // the call does not fail: its event waits in Redis
        served++;
      }
      const metrics = await scrape(fleet.procs[0]?.metricsUrl as string);
      expect(
        metricSum(metrics, 'svc_gateway_settle_durable_total', { result: 'failed' }) +
          metricSum(metrics, 'svc_gateway_settle_durable_total', { result: 'skipped' }),
      ).toBeGreaterThanOrEqual(served);
    } finally {
      await pg.startServer();
    }
    await until(async () => (await ledgerRows()).rows === before.rows + served, 60_000, 'the exporter wrote them');
    await until(async () => (await ledgerOf(pg.pool, 'acme', 'k')).spent === (await store.ledger('acme')).spentNano, 30_000, 'ledger equals Redis');
    expect((await ledgerRows()).doubled).toBe(0);
  }, 180_000);
});
