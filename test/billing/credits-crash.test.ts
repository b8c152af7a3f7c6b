// Money that must survive restarts: credits applied once by id however many processes publish them, and the
// holds of a crashed process released once they expire (reliability cases 2 and 13).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NANO_PER_USD } from '../../gateway/contract/money.ts';
import { RedisStore } from '../../gateway/state/redis-store.ts';
import { chat, fleetStore, me, startFleet, type Fleet } from '../helpers/fleet.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { setup } from './fixtures.ts';
import { settled } from '../helpers/settled.ts';

const HOLD_TTL_S = 2;
const credits = [{ id: 'po-1001', amountUsd: 5 }];
const s = setup([{ name: 'acme', spec: { trialCreditUsd: 1, credits } }], [{ name: 'k', account: 'acme' }], 10_000);
let redis: TestRedis;
let fleet: Fleet;
let store: RedisStore;

beforeAll(async () => {
  redis = await startRedis('credits');
  fleet = await startFleet(2, redis, s.docs, { SVC_HOLD_TTL_SECONDS: String(HOLD_TTL_S) });
  store = await fleetStore(redis);
});

afterAll(async () => {
  await store?.close();
  await fleet?.stop();
  await redis?.stop();
});

const withCredits = (list: Array<{ id: string; amountUsd: number }>): object[] =>
  s.docs.map((d) => ((d as { kind: string }).kind === 'Account' ? { ...d, spec: { ...(d as { spec: object }).spec, credits: list } } : d));

describe('credits and crashes', () => {
  it('grants the trial once and each credit once by id, across processes publishing the same manifests', async () => {
    expect((await store.ledger('acme')).creditedNano).toBe(6 * NANO_PER_USD); // 2 processes started together
    await fleet.add(s.docs); // a restart, the same credit again
    await fleet.add(withCredits([...credits, { id: 'po-1002', amountUsd: 2.5 }]));
    await fleet.add(
      withCredits([
        { id: 'po-1001', amountUsd: 500 },
        { id: 'po-1002', amountUsd: 2.5 },
      ]),
    ); // an edited amount is not applied again
    expect((await store.ledger('acme')).creditedNano).toBe(8.5 * NANO_PER_USD);
    expect((await me(fleet.urls[0] as string, s.keys.k as string)).body).toMatchObject({ balance_usd: 8.5 });
  });

  it('releases the holds of a process killed mid-call once they expire; nothing is charged for them', async () => {
    const key = s.keys.k as string;
    const victim = fleet.procs[0];
    if (!victim) throw new Error('no process');
    const before = await store.ledger('acme');
    const inFlight = Array.from({ length: 5 }, () => chat(victim.url, key, { model: 'mock-slow' }).catch(() => null));
    for (let i = 0; i < 100 && (await store.ledger('acme')).openHolds < 5; i++) await new Promise((r) => setTimeout(r, 20));
    const open = await store.ledger('acme');
    expect(open.openHolds).toBe(5);
    victim.child.kill('SIGKILL');
    await Promise.all(inFlight);
    await new Promise((r) => setTimeout(r, HOLD_TTL_S * 1000 + 100));
    // The next call on another process reclaims the expired holds in its admission.
    const survivor = fleet.procs[1]?.url as string;
    expect((await chat(survivor, key)).status).toBe(200);
    await settled(store, 'acme', { tries: 50 });
    const after = await store.ledger('acme');
    const events = await store.usageEvents('acme');
    console.log(
      `crashed process: ${open.openHolds} holds (${open.heldNano} nUSD) open at the kill; after ${HOLD_TTL_S} s: held ${after.heldNano}, open holds ${after.openHolds}`,
    );
    expect(after).toMatchObject({ heldNano: 0, openHolds: 0 });
    expect(after.spentNano - before.spentNano).toBe(events.at(-1)?.costNano); // only the survivor's call
    expect(after.spentNano).toBe(events.reduce((sum, e) => sum + e.costNano, 0));
  });
});
