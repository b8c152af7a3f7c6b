// Redis failure policy (docs/operations.md): Redis stalled (CLIENT PAUSE) or down under requests. No request waits much past the
// command timeout; money paths answer 503 with retry-after (fail closed); settles that hit the stall are retried
// and land once; no dollar is admitted past a budget.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metricSum, scrape } from '../helpers/prom.ts';
import { until } from '../helpers/until.ts';
import { RedisStore } from '../../gateway/state/redis-store.ts';
import { chat, fleetStore, startFleet, type CallResult, type Fleet } from '../helpers/fleet.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { setup } from './fixtures.ts';

const TIMEOUT_MS = 300;
const BUDGET_NANO = 2_000_000;
const s = setup([{ name: 'acme', spec: { trialCreditUsd: 10 } }], [{ name: 'k', account: 'acme', spec: { monthlyBudgetUsd: BUDGET_NANO / 1e9 } }], 600);
let redis: TestRedis;
let fleet: Fleet;
let store: RedisStore;

beforeAll(async () => {
  redis = await startRedis('failure', { own: true });
  fleet = await startFleet(2, redis, s.docs, { SVC_REDIS_TIMEOUT_MS: String(TIMEOUT_MS), SVC_HOLD_TTL_SECONDS: '2' });
  store = await fleetStore(redis);
});

afterAll(async () => {
  await store?.close();
  await fleet?.stop();
  await redis?.stop();
});

async function burst(n: number): Promise<CallResult[]> {
  const key = s.keys.k as string;
  return Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const url = fleet.urls[i % 2] as string;
      if (i % 5 === 4) {
        const startedAt = Date.now();
        const res = await fetch(`${url}/v1/me`, { headers: { authorization: `Bearer ${key}` } });
        return { status: res.status, retryAfter: res.headers.get('retry-after'), startedAt, ms: Date.now() - startedAt, body: await res.text() };
      }
      return chat(url, key);
    }),
  );
}

function expectFailClosed(name: string, results: CallResult[]): void {
  const longest = Math.max(...results.map((r) => r.ms));
  console.log(
    `${name}: waits ${results
      .map((r) => r.ms)
      .sort((a, b) => a - b)
      .join(' ')}`,
  );
  console.log(
    `${name}: ${results.length} calls, statuses ${[...new Set(results.map((r) => r.status))].join(',')}, longest wait ${longest} ms (command timeout ${TIMEOUT_MS} ms)`,
  );
  for (const r of results) {
    expect(r.status).toBe(503);
    expect(Number(r.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(r.body)).toMatchObject({ error: { code: 'store_unavailable' } });
  }
  expect(longest).toBeLessThan(TIMEOUT_MS + 1200);
}

describe('Redis failure policy', () => {
  it('answers 503 + retry-after within the command timeout while Redis is stalled, then recovers', async () => {
    expect((await chat(fleet.urls[0] as string, s.keys.k as string)).status).toBe(200);
    // Calls admitted before the stall settle during it: their settle is retried and lands once.
    const inFlight = Array.from({ length: 4 }, (_, i) => chat(fleet.urls[i % 2] as string, s.keys.k as string, { model: 'mock-slow' }));
    await until(async () => (await store.ledger('acme')).openHolds === 4, 5000);
    const unavailable = async (): Promise<number> =>
      (await Promise.all(fleet.metricsUrls.map(scrape))).reduce((n, text) => n + metricSum(text, 'svc_gateway_errors_total', { code: 'store_unavailable' }), 0);
    const before = await unavailable();
    await redis.client.call('CLIENT', 'PAUSE', '2500', 'ALL');
    const pausedAt = Date.now();
    // The settles waiting for Redis, as every gateway reports them (svc_gateway_settles_pending), sampled during the stall.
    const pending = async (): Promise<number> =>
      (await Promise.all(fleet.metricsUrls.map(scrape))).reduce((n, text) => n + metricSum(text, 'svc_gateway_settles_pending'), 0);
    let mostPending = 0;
    const sampler = (async () => {
      while (Date.now() < pausedAt + 2400) {
        mostPending = Math.max(mostPending, await pending());
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    expectFailClosed('Redis paused', await burst(40));
    // Each of those answers is counted (the chart's SvcGatewayStoreUnavailable alert reads this counter).
    expect((await unavailable()) - before).toBe(40);
    expect((await Promise.all(inFlight)).map((r) => r.status)).toEqual([200, 200, 200, 200]);
    await sampler;
    expect(mostPending).toBeGreaterThanOrEqual(1); // the in-flight calls' settles waited for Redis, and said so
    await new Promise((r) => setTimeout(r, Math.max(0, pausedAt + 2600 - Date.now())));
    await until(async () => (await chat(fleet.urls[1] as string, s.keys.k as string)).status === 200, 5000);
    await until(async () => (await store.ledger('acme')).openHolds === 0, 5000);
    await until(async () => (await pending()) === 0, 5000, 'every retried settle landed');
    const ledger = await store.ledger('acme');
    const events = (await store.usageEvents('acme')).filter((e) => e.status === 200);
    expect(ledger.spentNano).toBe(events.reduce((sum, e) => sum + e.costNano, 0));
    expect(events.filter((e) => e.servedModel === 'mock-slow')).toHaveLength(4);
    expect(ledger.spentNano).toBeLessThanOrEqual(BUDGET_NANO);
  });

  it('answers 503 + retry-after at once while Redis is down, and serves again when it is back', async () => {
    await redis.kill();
    expectFailClosed('Redis down', await burst(40));
    await redis.restart();
    // A Redis restarted without persistence has lost config and money. Without DATABASE_URL there is no record to
    // rebuild balances from: one process marks the trial and credits as granted with no money (never granted
    // twice) and republishes; until then 503, never 401 (key records are gone with the rest), and then 402.
    const seen: number[] = [];
    const statuses = async (): Promise<number[]> => {
      const got = await Promise.all(fleet.urls.map(async (u) => (await chat(u, s.keys.k as string)).status));
      seen.push(...got);
      return got;
    };
    await until(async () => (await statuses()).every((st) => st !== 503), 10_000);
    for (const st of await statuses()) expect(st).toBe(402);
    expect(seen.filter((st) => st !== 503 && st !== 402)).toEqual([]);
    // The test's own connection reconnects on its own schedule (no offline queue): read once it is back.
    await until(
      () =>
        store.ledger('acme').then(
          () => true,
          () => false,
        ),
      10_000,
      'the test store reconnected',
    );
    expect(await store.ledger('acme')).toMatchObject({ creditedNano: 0, spentNano: 0 });
  });
});
