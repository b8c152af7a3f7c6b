// Leases held by three gateway processes (three stores on one Redis, each its own connection and leases): exact at
// every cap, a revocation reaches a process holding a lease, and a process that dies loses what the docs say.
import { describe, expect, it } from 'vitest';
import { useLeaseStores } from '../../test/helpers/lease-stores.ts';
import { until } from '../../test/helpers/until.ts';
import type { CompiledAccount, KeyRecord } from '../contract/snapshot.ts';
import { RedisStore } from './redis-store.ts';
import { account, held, keyRec, request, snapshot, usage } from './store-suite-fixtures.ts';
import type { AdmitRequest } from './store.ts';
import type { LeaseOptions } from './leases.ts';

const stores = useLeaseStores('leases-fleet');

/** One minute before a month ends (UTC), as the store suite: every call of a test at this time or a little later. */
const T = Date.UTC(2026, 10, 30, 23, 58, 0);
const LIFE = 1000;
const GRACE = 5000;

async function fleet(acct: CompiledAccount, key: KeyRecord, leases: LeaseOptions[] = [{}, {}, {}]): Promise<RedisStore[]> {
  const prefix = stores.prefix();
  const all = await Promise.all(leases.map((l) => stores.connect({ lifeMs: LIFE, graceMs: GRACE, ...l }, prefix)));
  await all[0]?.applyConfig(snapshot([acct]), [key]);
  return all;
}

describe('leases held by three processes, at each cap: N concurrent calls against caps that fit N-1 serve exactly N-1', () => {
  const cases: Array<[string, Partial<KeyRecord>, Partial<CompiledAccount>, Partial<AdmitRequest>, string]> = [
    ['RPM', { rpm: 100 }, {}, {}, 'rate_limited'],
    ['TPM', { tpm: 1000 }, {}, { tokens: 10 }, 'rate_limited'],
    ['monthly budget', { monthlyBudgetNano: 100_000 }, {}, { holdNano: 1000 }, 'budget_exceeded'],
    ['balance', {}, { trialCreditNano: 100_000 }, { holdNano: 1000 }, 'insufficient_balance'],
  ];
  // Over all three, and over two while the third sits on an unused slice (given back when the others ask for it).
  const spreads: Array<[string, number[]]> = [
    ['over the three', [0, 1, 2]],
    ['over two, the third idle', [1, 2]],
  ];
  for (const [cap, keyOver, acctOver, reqOver, code] of cases) {
    for (const [spread, which] of spreads) {
      it(`${cap}: 100 fit; 3 admitted from leases, then 98 at once ${spread}: 97 more served, 1 refused`, async () => {
        const acct = account(acctOver);
        const key = keyRec(keyOver);
        const stores = await fleet(acct, key);
        // Each process leases a slice with its first call, far from the cap.
        for (const s of stores) held(await s.admit(request(key, acct, T, reqOver)));
        expect(stores.map((s) => s.leases?.held)).toEqual([1, 1, 1]);
        const all = await Promise.all(
          Array.from({ length: 98 }, (_, i) => (stores[which[i % which.length] as number] as RedisStore).admit(request(key, acct, T + 1, reqOver))),
        );
        const refused = all.filter((d) => !d.ok);
        expect(all.length - refused.length).toBe(97);
        expect(refused.map((d) => !d.ok && d.code)).toEqual([code]);
        // Once every lease is back, Redis holds exactly the 100 calls: the slices left nothing behind.
        await Promise.all(stores.map((s) => s.leases?.releaseAll()));
        const ledger = await (stores[0] as RedisStore).ledger('acme');
        expect(ledger.openHolds).toBe(100);
        expect(ledger.heldNano).toBe(100 * (reqOver.holdNano ?? 1000));
      });
    }
  }
});

describe('a revocation while leases are held', () => {
  it('revoke() returns once no process holds a lease on the key: every call after it is refused, on every process', async () => {
    const acct = account();
    const key = keyRec();
    const [a, b, admin] = await fleet(acct, key);
    if (!a || !b || !admin) throw new Error('three stores');
    const first = held(await a.admit(request(key, acct, T)));
    held(await b.admit(request(key, acct, T)));
    expect([a.leases?.held, b.leases?.held]).toEqual([1, 1]);
    await admin.revoke(key.hash); // what the operator does on ApiKey.spec.revoked
    expect([a.leases?.held, b.leases?.held]).toEqual([0, 0]);
    expect(await a.admit(request(key, acct, T + 1))).toMatchObject({ ok: false, code: 'key_revoked' });
    expect(await b.admit(request(key, acct, T + 1))).toMatchObject({ ok: false, code: 'key_revoked' });
    // A call admitted before settles once: charged, its event written, nothing left held.
    await a.settle(first, { costNano: 500, tokens: 10, event: usage(first, 500, T) });
    await until(async () => (await admin.ledger('acme')).openHolds === 1, 10_000, 'the first call settled');
    expect(await admin.ledger('acme')).toMatchObject({ spentNano: 500, heldNano: 1000, openHolds: 1 });
    expect((await admin.usageEvents('acme')).map((e) => e.eventId)).toEqual([first.id]);
  });
});

describe('a process killed while holding a lease', () => {
  it('loses the settles not yet flushed (their charge and usage event) and nothing else; its slice comes back at the deadline', async () => {
    const acct = account({ trialCreditNano: 100_000 });
    const key = keyRec();
    // The dying process flushes only at release: what it settled is all unflushed when it dies.
    const [dying, survivor] = await fleet(acct, key, [{ flushMs: 3_600_000 }, {}]);
    if (!dying || !survivor) throw new Error('two stores');
    stores.forget(dying);

    // One flushed-and-settled call first (a drain-free write path: released by giving the lease back).
    const kept = held(await dying.admit(request(key, acct, T, { holdNano: 1000 })));
    await dying.settle(kept, { costNano: 700, tokens: 10, event: usage(kept, 700, T) });
    await dying.leases?.releaseAll();
    // Then a fresh lease: three calls settled but not flushed, two still running.
    const calls = [];
    for (let i = 0; i < 5; i++) calls.push(held(await dying.admit(request(key, acct, T + 10, { holdNano: 1000 }))));
    expect(calls.every((h) => h.lease !== undefined)).toBe(true);
    for (const h of calls.slice(0, 3)) await dying.settle(h, { costNano: 600, tokens: 10, event: usage(h, 600, T + 10) });
    // SIGKILL: the connection drops, nothing more is written.
    dying.redis.disconnect();

    // Lost: the three unflushed settles (600 each: the operator's loss, never the customer's) and their events.
    const ledger = await survivor.ledger('acme');
    expect(ledger.spentNano).toBe(700);
    expect((await survivor.usageEvents('acme')).map((e) => e.eventId)).toEqual([kept.id]);
    // The slice stays held until the lease's deadline (its end plus the grace), then comes back whole.
    expect(ledger.openHolds).toBe(1);
    expect((await survivor.admit(request(key, acct, T + 20, { holdNano: 100_000 - 700 }))).ok).toBe(false);
    const after = held(await survivor.admit(request(key, acct, T + 10 + LIFE + GRACE + 1, { holdNano: 100_000 - 700 })));
    expect(after.holdNano).toBe(99_300);
    expect(await survivor.ledger('acme')).toMatchObject({ spentNano: 700, heldNano: 99_300, openHolds: 1 });
  });
});

describe('asking leases back covers what the refusal was about', () => {
  it("a key at its RPM cap asks back that key's leases only; one that fits the balance only without another key's slice gets it", async () => {
    const acct = account({ trialCreditNano: 1_000_000 });
    const capped = keyRec({ rpm: 2 });
    const other = keyRec({ hash: 'cd'.repeat(32), name: 'k2' });
    const prefix = stores.prefix();
    const [a, b] = await Promise.all([0, 1].map(() => stores.connect({ lifeMs: LIFE, graceMs: GRACE }, prefix)));
    if (!a || !b) throw new Error('two stores');
    await a.applyConfig(snapshot([acct]), [capped, other]);
    held(await a.admit(request(other, acct, T)));
    expect(a.leases?.held).toBe(1);
    for (let i = 0; i < 2; i++) held(await b.admit(request(capped, acct, T)));
    expect(await b.admit(request(capped, acct, T))).toMatchObject({ ok: false, code: 'rate_limited' });
    // The other key's lease was not asked for: still held, still admitting.
    expect(a.leases?.held).toBe(1);
    expect((await a.admit(request(other, acct, T + 1))).ok).toBe(true);
    // A call that fits the balance only without the other key's unused slice: the account's leases are asked back,
    // and it is served.
    expect((await b.admit(request(other, acct, T + 2, { holdNano: 990_000 }))).ok).toBe(true);
    expect(a.leases?.held).toBe(0);
  });
});
