// Key expiry across 3 gateway processes on one Redis, two of them with clocks an hour off (README: Keys, expiry and
// rotation): every process answers 401 key_expired from the second the Redis server's clock reaches the expiry, and
// none before it; calls straddling the second may go either way (admission is when the call reached Redis).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { skewedClockEnv } from '../helpers/clock-skew.ts';
import { compile } from '../../gateway/contract/compile.ts';
import { parseManifests } from '../../gateway/config/manifests.ts';
import { chat, countBy, FLEET_PEPPER, fleetStore, startFleet, type CallResult, type Fleet } from '../helpers/fleet.ts';
import { account, apiKey, plan, route } from '../helpers/manifests.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import type { RedisStore } from '../../gateway/state/redis-store.ts';

const HOUR = 3_600_000;
let redis: TestRedis;
let fleet: Fleet;
let store: RedisStore;
let key: string;
let expiresAt: number;

async function serverNow(): Promise<number> {
  const [sec, usec] = await store.redis.time();
  return Number(sec) * 1000 + Math.floor(Number(usec) / 1000);
}

let docsFor: (expiresAt: number) => object[];

beforeAll(async () => {
  redis = await startRedis('expiry-fleet');
  store = await fleetStore(redis);
  const k = apiKey('soon', 'acme');
  key = k.key;
  docsFor = (at) => [
    plan('builder', { tier: 2 }),
    account('acme', 'builder', { credits: [{ id: 'c1', amountUsd: 100 }] }),
    { ...(k.docs[0] as object), spec: { accountRef: 'acme', expiresAt: new Date(at).toISOString() } },
    k.docs[1] as object,
    route('mock-fast', [{ name: 'mock-a', provider: 'mock', mock: { latencyMs: 5, chunkDelayMs: 0 } }]),
  ];
  const docs = docsFor((await serverNow()) + 24 * HOUR);
  fleet = await startFleet(1, redis, docs);
  await fleet.add(docs, skewedClockEnv(HOUR)); // an hour ahead
  await fleet.add(docs, skewedClockEnv(-HOUR)); // an hour behind
}, 60_000);

/** What the operator (or a standalone process) does when spec.expiresAt changes: the records published again. */
async function publish(at: number): Promise<void> {
  const parsed = parseManifests(docsFor(at).map((doc, i) => ({ source: `t#${i}`, doc })));
  const r = compile(parsed.set, { pepper: FLEET_PEPPER });
  await store.applyConfig(r.snapshot, r.keys);
}

afterAll(async () => {
  await store?.close();
  await fleet?.stop();
  await redis?.stop();
});

describe('key expiry on 3 processes with different clocks', () => {
  it('agree at the second: all serve before it, none after it; the header tells the time left by the server clock', async () => {
    // On a whole second, as people write it, a few seconds ahead of the server's clock.
    expiresAt = Math.ceil(((await serverNow()) + 4000) / 1000) * 1000;
    await publish(expiresAt);
    const left = await Promise.all(
      fleet.urls.map(async (url) => {
        const r = await fetch(`${url}/v1/me`, { headers: { authorization: `Bearer ${key}` } });
        expect(r.status).toBe(200);
        return Number(r.headers.get('x-svc-key-expires-in'));
      }),
    );
    const truth = (expiresAt - (await serverNow())) / 1000;
    // By its own clock one process would say 0 (expired an hour ago), another 3604: each tells the server's time left.
    for (const s of left) expect(Math.abs(s - truth)).toBeLessThanOrEqual(2);

    // Traffic on every process from 1.5 s before the expiry to 1.5 s after (bounded), calls round-robin.
    while ((await serverNow()) < expiresAt - 1500) await new Promise((r) => setTimeout(r, 50));
    const results: Array<CallResult & { proc: number }> = [];
    await Promise.all(
      Array.from({ length: 6 }, async (_, w) => {
        for (let i = 0; Date.now() < expiresAt + 1500 && i < 1000; i++) {
          const proc = (w + i) % 3;
          results.push({ ...(await chat(fleet.urls[proc] as string, key)), proc });
        }
      }),
    );
    // This test's clock is the machine's, as Redis's is: a call started after the expiry reached Redis after it.
    const before = results.filter((r) => r.startedAt + r.ms < expiresAt);
    const after = results.filter((r) => r.startedAt >= expiresAt);
    console.log(
      `expiry: ${results.length} calls; finished before the second: ${JSON.stringify(countBy(before, (r) => r.status))}; started after: ${JSON.stringify(countBy(after, (r) => `${r.proc}:${r.status}`))}`,
    );
    for (const proc of [0, 1, 2]) {
      expect(before.filter((r) => r.proc === proc).length).toBeGreaterThan(3);
      expect(after.filter((r) => r.proc === proc).length).toBeGreaterThan(3);
    }
    expect(before.filter((r) => r.status !== 200).map((r) => `${r.proc}:${r.status}`)).toEqual([]);
    expect(after.filter((r) => r.status !== 401).map((r) => `${r.proc}:${r.status}`)).toEqual([]);
    expect(JSON.parse(after[0]?.body ?? '{}')).toMatchObject({ error: { code: 'key_expired', type: 'authentication_error' } });
  });
});
