// Leased admission across 3 real gateway processes on one Redis (docs/billing.md: Leased admission), started with
// the setting the docs' example gives: calls served from leases with far fewer scripts than calls, the ledger equal
// to the usage events, and a process SIGKILLed while holding leases loses only its last unflushed settles.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docExample } from '../helpers/docs.ts';
import { metricSum, scrape } from '../helpers/prom.ts';
import { chat, countBy, fleetStore, startFleet, type Fleet } from '../helpers/fleet.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { settled } from '../helpers/settled.ts';
import { until } from '../helpers/until.ts';
import type { RedisStore } from '../../gateway/state/redis-store.ts';
import { setup } from './fixtures.ts';

const s = setup(
  [{ name: 'acme', spec: { trialCreditUsd: 100 } }],
  [
    { name: 'busy', account: 'acme', spec: { monthlyBudgetUsd: 50 } },
    { name: 'victim', account: 'acme', spec: { monthlyBudgetUsd: 50 } },
  ],
);

/** The environment the docs' example sets, besides what the fleet sets itself (Redis, pepper). */
function exampleEnv(): Record<string, string> {
  const line = docExample('docs/billing.md', 'admission-leases')
    .split('\n')
    .find((l) => l.includes('npm start')) as string;
  return Object.fromEntries([...line.matchAll(/\b(SVC_ADMISSION_[A-Z_]+)=(\S+)/g)].map((m) => [m[1] as string, m[2] as string]));
}

let redis: TestRedis;
let fleet: Fleet;
let store: RedisStore;

beforeAll(async () => {
  const env = exampleEnv();
  expect(env).toEqual({ SVC_ADMISSION_LEASES: '1' });
  redis = await startRedis('leases');
  fleet = await startFleet(3, redis, s.docs, env);
  store = await fleetStore(redis);
});
afterAll(async () => {
  await store?.close();
  await fleet?.stop();
  await redis?.stop();
});

async function scripts(): Promise<number> {
  const info = await store.redis.info('commandstats');
  return [...info.matchAll(/cmdstat_(?:evalsha|eval):calls=(\d+)/g)].reduce((n, m) => n + Number(m[1]), 0);
}

describe('leased admission across 3 gateway processes', () => {
  it('serves calls from leases with fewer scripts than calls, and the ledger equals the usage events', async () => {
    const before = await scripts();
    const results = await Promise.all(Array.from({ length: 150 }, (_, i) => chat(fleet.urls[i % 3] as string, s.keys.busy as string)));
    expect(countBy(results, (r) => r.status)).toEqual({ 200: 150 });
    await settled(store, 'acme');
    const used = (await scripts()) - before;
    console.log(`150 calls over 3 processes with leases: ${used} scripts run in Redis (per call: 2 without leases)`);
    expect(used).toBeLessThan(150);
    const events = (await store.usageEvents('acme')).filter((e) => e.apiKey === 'busy');
    expect(events).toHaveLength(150);
    expect(new Set(events.map((e) => e.eventId)).size).toBe(150);
    const ledger = await store.ledger('acme');
    expect(ledger).toMatchObject({ heldNano: 0, openHolds: 0 });
    expect(ledger.spentNano).toBe(events.reduce((n, e) => n + e.costNano, 0));
    // Each process's /metrics says how its calls were admitted: together, every call once, most from leases.
    const texts = await Promise.all(fleet.metricsUrls.map((u) => scrape(u)));
    const sum = (name: string, labels: Record<string, string> = {}): number => texts.reduce((n, t) => n + metricSum(t, name, labels), 0);
    const local = sum('svc_gateway_admission_calls_total', { path: 'lease' });
    const perCall = sum('svc_gateway_admission_calls_total', { path: 'per_call' });
    console.log(
      `admitted from leases ${local}, per call ${perCall}; leases granted ${sum('svc_gateway_admission_lease_grants_total', { outcome: 'granted' })}`,
    );
    expect(local + perCall).toBe(150);
    expect(local).toBeGreaterThan(perCall);
    const granted = sum('svc_gateway_admission_lease_grants_total', { outcome: 'granted' });
    expect(granted).toBeGreaterThan(0);
    expect(granted).toBeLessThan(local);
    expect(sum('svc_gateway_admission_lease_grants_total', { outcome: 'failed' })).toBe(0);
    for (const t of texts) expect(t).toMatch(/^svc_gateway_admission_leases_active \d+$/m);
  });

  it('a process SIGKILLed while holding a lease loses only its settles not yet flushed; its slice comes back', { timeout: 120_000 }, async () => {
    const victim = fleet.procs[0];
    if (!victim) throw new Error('no process');
    let answered = 0;
    for (let i = 0; i < 40; i++) {
      expect((await chat(victim.url, s.keys.victim as string)).status).toBe(200);
      answered++;
    }
    const killedAt = Date.now();
    victim.child.kill('SIGKILL');
    await until(() => victim.child.exitCode !== null || victim.child.signalCode !== null, 30_000, 'the killed process gone');
    // Its slice (a hold) is released by Redis at its deadline, by the next script on the account: the survivors'
    // calls (their own leases go back within a second of their last call).
    await until(
      async () => {
        expect((await chat(fleet.urls[1] as string, s.keys.victim as string)).status).toBe(200);
        await settled(store, 'acme');
        return (await store.ledger('acme')).openHolds === 0;
      },
      60_000,
      'the dead process lease reclaimed',
      500,
    );
    const events = (await store.usageEvents('acme')).filter((e) => e.apiKey === 'victim' && e.upstream !== null && Date.parse(e.createdAt) <= killedAt);
    const lost = answered - events.length;
    console.log(`SIGKILL after 40 answered calls: ${events.length} charged, ${lost} lost (settled in the last flush interval)`);
    // Lost: only calls whose settle was not written yet; nothing charged twice, no event without its charge.
    expect(events.length).toBeLessThanOrEqual(answered);
    expect(new Set(events.map((e) => e.eventId)).size).toBe(events.length);
    const ledger = await store.ledger('acme');
    expect(ledger.heldNano).toBe(0);
    const all = await store.usageEvents('acme');
    expect(ledger.spentNano).toBe(all.reduce((n, e) => n + e.costNano, 0));
  });
});
