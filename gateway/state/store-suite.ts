// The one suite both stores pass (memory-store.test.ts, redis-store.test.ts): limits, holds and money, exact.
import { afterEach, describe, expect, it } from 'vitest';
import type { UsageEvent } from '../usage/event.ts';
import { feeShareNano } from '../contract/money.ts';
import { MAX_AMOUNT, type AdmitDecision, type Hold, type Store, type StoreAdmin } from './store.ts';
import { account, held, keyRec, request, snapshot, usage } from './store-suite-fixtures.ts';

export interface SuiteStore {
  store: Store & StoreAdmin;
  /** Usage events the store recorded for an account, oldest first. */
  events(account: string): Promise<UsageEvent[]>;
  /** The store's clock for key expiry (memory: the process's; Redis: the server's TIME). */
  clock(): Promise<number>;
  close(): Promise<void>;
}

export type StoreFactory = (timing: { holdTtlMs: number }) => Promise<SuiteStore>;

const HOLD_TTL = 5_000;
/** One minute before a month ends (UTC), so rollover is a few steps away. */
const T = Date.UTC(2026, 10, 30, 23, 58, 0);

export function storeSuite(name: string, make: StoreFactory): void {
  describe(`${name}: the Store contract`, () => {
    let open: SuiteStore[] = [];
    const fresh = async (acct = account(), keys = [keyRec()]): Promise<SuiteStore & { store: Store & StoreAdmin }> => {
      const s = await make({ holdTtlMs: HOLD_TTL });
      open.push(s);
      await s.store.applyConfig(snapshot([acct]), keys);
      return s;
    };
    const settle = (store: Store, hold: Hold, cost: number, now: number, tokens = 10): Promise<void> =>
      store.settle(hold, { costNano: cost, tokens, event: usage(hold, cost, now) });

    afterEach(async () => {
      await Promise.all(open.map((s) => s.close()));
      open = [];
    });

    it('admits exactly rpm calls in any 60 s and says when the next one fits', async () => {
      const key = keyRec({ rpm: 3 });
      const { store } = await fresh(account(), [key]);
      for (const dt of [0, 1000, 2000]) held(await store.admit(request(key, account(), T + dt)));
      expect(await store.admit(request(key, account(), T + 3000))).toEqual({
        ok: false,
        code: 'rate_limited',
        message: 'Rate limit of 3 requests per minute reached.',
        retryAfterSec: 57,
      });
      held(await store.admit(request(key, account(), T + 60_000))); // the call at T left the window
      const d = await store.admit(request(key, account(), T + 60_001));
      expect(d).toMatchObject({ ok: false, code: 'rate_limited', retryAfterSec: 1 });
    });

    it('admits exactly rpm calls fired at once', async () => {
      const key = keyRec({ rpm: 7 });
      const { store } = await fresh(account(), [key]);
      const all = await Promise.all(Array.from({ length: 40 }, () => store.admit(request(key, account(), T))));
      expect(all.filter((d) => d.ok)).toHaveLength(7);
      expect(all.filter((d) => !d.ok && d.code === 'rate_limited' && d.retryAfterSec === 60)).toHaveLength(33);
    });

    it('reserves tokens against TPM, then counts the actual tokens once settled', async () => {
      const key = keyRec({ tpm: 1000 });
      const { store } = await fresh(account(), [key]);
      const first = held(await store.admit(request(key, account(), T, { tokens: 600 })));
      expect(await store.admit(request(key, account(), T + 10_000, { tokens: 600 }))).toEqual({
        ok: false,
        code: 'rate_limited',
        message: 'Rate limit of 1000 tokens per minute reached.',
        retryAfterSec: 50,
      });
      await settle(store, first, 100, T + 11_000, 100);
      held(await store.admit(request(key, account(), T + 12_000, { tokens: 600 })));
      expect(await store.admit(request(key, account(), T + 13_000, { tokens: 1001 }))).toMatchObject({
        ok: false,
        code: 'request_too_large_for_limit',
        message: "This request needs up to 1001 tokens, 1 above this key's limit of 1000 tokens per minute; lower max_tokens or shorten the input.",
      });
    });

    it('holds the worst case against the monthly budget: never over, whatever the concurrency', async () => {
      const key = keyRec({ monthlyBudgetNano: 10_000 });
      const { store } = await fresh(account(), [key]);
      const all = await Promise.all(Array.from({ length: 30 }, () => store.admit(request(key, account(), T, { holdNano: 4000 }))));
      const ok = all.filter((d) => d.ok);
      expect(ok).toHaveLength(2);
      expect(all.find((d) => !d.ok)).toEqual({
        ok: false,
        code: 'budget_exceeded',
        message:
          "This call may cost up to 0.000004 USD, more than the 0.000002 USD left of this key's monthly budget of 0.00001 USD this month; a lower max_tokens (or a shorter input) makes it fit.",
      });
      await settle(store, held(ok[0] as AdmitDecision), 1000, T + 1);
      held(await store.admit(request(key, account(), T + 2, { holdNano: 4000 }))); // 1000 spent + 4000 + 4000 held
      expect((await store.admit(request(key, account(), T + 3, { holdNano: 1001 }))).ok).toBe(false);
    });

    it('holds the worst case against the balance: never over, whatever the concurrency', async () => {
      const acct = account({ trialCreditNano: 10_000 });
      const { store } = await fresh(acct);
      const all = await Promise.all(Array.from({ length: 30 }, () => store.admit(request(keyRec(), acct, T, { holdNano: 3000 }))));
      expect(all.filter((d) => d.ok)).toHaveLength(3);
      expect(all.find((d) => !d.ok)).toEqual({
        ok: false,
        code: 'insufficient_balance',
        message:
          "This call may cost up to 0.000003 USD, more than the 0.000001 USD left of the account's balance; a lower max_tokens (or a shorter input) makes it fit, or add credit.",
      });
    });

    it('settles the actual cost and releases the rest of the hold; a failed call releases it all', async () => {
      const acct = account({ trialCreditNano: 10_000 });
      const { store } = await fresh(acct);
      const a = held(await store.admit(request(keyRec(), acct, T, { holdNano: 6000 })));
      const b = held(await store.admit(request(keyRec(), acct, T, { holdNano: 4000 })));
      expect(await store.ledger('acme')).toEqual({ creditedNano: 10_000, spentNano: 0, feeNano: 0, heldNano: 10_000, openHolds: 2 });
      await settle(store, a, 2500, T + 1);
      await settle(store, b, 0, T + 1);
      expect(await store.ledger('acme')).toEqual({ creditedNano: 10_000, spentNano: 2500, feeNano: feeShareNano(2500), heldNano: 0, openHolds: 0 });
      expect(await store.view('acme', 'k1', T + 2)).toEqual({
        balanceNano: 7500,
        keyMonthSpendNano: 2500,
        accountMonthSpendNano: 2500,
        keyMonthCacheHits: 0,
        keyMonthCacheSavedNano: 0,
      });
    });

    it('settles each hold once: a retried settle charges nothing more and records no second event', async () => {
      const { store, events } = await fresh();
      const h = held(await store.admit(request(keyRec(), account(), T)));
      await settle(store, h, 700, T + 1);
      await settle(store, h, 700, T + 2);
      await Promise.all([settle(store, h, 700, T + 3), settle(store, h, 700, T + 3)]);
      expect((await store.ledger('acme')).spentNano).toBe(700);
      expect((await events('acme')).map((e) => e.eventId)).toEqual([h.id]);
    });

    it('admits one call id once, even if the admission is sent twice', async () => {
      const { store } = await fresh();
      const r = request(keyRec(), account(), T);
      held(await store.admit(r));
      held(await store.admit(r));
      expect(await store.ledger('acme')).toMatchObject({ heldNano: 1000, openHolds: 1 });
    });

    it('releases holds nobody settled (a crashed replica) once they expire; a late settle still charges once', async () => {
      const acct = account({ trialCreditNano: 10_000 });
      const { store } = await fresh(acct);
      const lost = held(await store.admit(request(keyRec(), acct, T, { holdNano: 6000 })));
      expect((await store.admit(request(keyRec(), acct, T + HOLD_TTL - 1, { holdNano: 6000 }))).ok).toBe(false);
      held(await store.admit(request(keyRec(), acct, T + HOLD_TTL, { holdNano: 6000 })));
      expect(await store.ledger('acme')).toMatchObject({ heldNano: 6000, openHolds: 1 });
      await settle(store, lost, 500, T + HOLD_TTL + 1);
      await settle(store, lost, 500, T + HOLD_TTL + 2);
      expect(await store.ledger('acme')).toMatchObject({ spentNano: 500, heldNano: 6000, openHolds: 1 });
    });

    it('grants the trial credit once, however often and concurrently config is applied', async () => {
      const { store } = await fresh(account({ trialCreditNano: 1_000_000 }));
      await Promise.all(Array.from({ length: 5 }, () => store.applyConfig(snapshot([account({ trialCreditNano: 1_000_000 })]), [keyRec()])));
      await store.applyConfig(snapshot([account({ trialCreditNano: 9_000_000 })]), [keyRec()]);
      expect((await store.ledger('acme')).creditedNano).toBe(1_000_000);
    });

    it('applies each credit once by id across repeated and concurrent applyConfig', async () => {
      const c1 = { id: 'topup-1', amountNano: 5_000_000 };
      const { store } = await fresh(account({ credits: [c1] }));
      const again = (): Promise<void> => store.applyConfig(snapshot([account({ credits: [c1] })]), [keyRec()]);
      await Promise.all([again(), again(), again()]);
      await store.applyConfig(snapshot([account({ credits: [c1, { id: 'topup-2', amountNano: 7 }] })]), [keyRec()]);
      await store.applyConfig(
        snapshot([
          account({
            credits: [
              { ...c1, amountNano: 99 },
              { id: 'topup-2', amountNano: 7 },
            ],
          }),
        ]),
        [keyRec()],
      );
      expect((await store.ledger('acme')).creditedNano).toBe(1_000_000 + 5_000_000 + 7);
    });

    it('starts a fresh monthly budget in a new UTC month; the balance carries over; nothing lost or counted twice', async () => {
      const key = keyRec({ monthlyBudgetNano: 10_000 });
      const { store, events } = await fresh(account(), [key]);
      const nov1 = held(await store.admit(request(key, account(), T, { holdNano: 6000 })));
      await settle(store, nov1, 6000, T + 1000);
      const nov2 = held(await store.admit(request(key, account(), T + 2000, { holdNano: 4000 })));
      expect((await store.admit(request(key, account(), T + 3000, { holdNano: 1 }))).ok).toBe(false);
      const dec = Date.UTC(2026, 11, 1, 0, 0, 1);
      expect(nov2.month).toBe('2026-11');
      const dec1 = held(await store.admit(request(key, account(), dec, { holdNano: 10_000 })));
      expect(dec1.month).toBe('2026-12');
      await settle(store, nov2, 3000, dec + 10); // charged to November, whose budget it was held against
      await settle(store, dec1, 2000, dec + 20);
      expect(await store.view('acme', 'k1', dec + 30)).toEqual({
        balanceNano: 1_000_000 - 11_000,
        keyMonthSpendNano: 2000,
        accountMonthSpendNano: 2000,
        keyMonthCacheHits: 0,
        keyMonthCacheSavedNano: 0,
      });
      expect(await store.view('acme', 'k1', T)).toMatchObject({ keyMonthSpendNano: 9000, accountMonthSpendNano: 9000 });
      const evs = await events('acme');
      expect(evs.reduce((s, e) => s + e.costNano, 0)).toBe((await store.ledger('acme')).spentNano);
    });

    it('keeps a revoked key revoked: no later config, stale record or removal brings it back', async () => {
      const key = keyRec();
      const { store } = await fresh(account(), [key]);
      expect((await store.findKey(key.hash))?.revoked).toBe(false);
      await store.revoke(key.hash);
      expect((await store.findKey(key.hash))?.revoked).toBe(true);
      expect(await store.admit(request(key, account(), T))).toEqual({ ok: false, code: 'key_revoked', message: 'This API key has been revoked.' });
      await store.applyConfig(snapshot([account()]), [{ ...key, revoked: false }]);
      expect((await store.findKey(key.hash))?.revoked).toBe(true);
      await store.applyConfig(snapshot([account()]), []);
      expect((await store.findKey(key.hash))?.revoked).toBe(true);
      await store.applyConfig(snapshot([account()]), [{ ...key, revoked: false }]);
      expect((await store.findKey(key.hash))?.revoked).toBe(true);
      expect((await store.admit(request({ ...key, revoked: false }, account(), T))).ok).toBe(false);
    });

    it('revokes through config for good, and drops keys that left the config', async () => {
      const a = keyRec({ hash: 'aa'.repeat(32), name: 'a', revoked: true });
      const b = keyRec({ hash: 'bb'.repeat(32), name: 'b' });
      const { store } = await fresh(account(), [a, b]);
      await store.applyConfig(snapshot([account()]), [{ ...a, revoked: false }]);
      expect((await store.findKey(a.hash))?.revoked).toBe(true);
      expect(await store.findKey(b.hash)).toBeNull();
      expect(await store.findKey('cc'.repeat(32))).toBeNull();
    });

    it('takes zero holds and zero costs: settled, expired or rolled out of the window, the account keeps working', async () => {
      const key = keyRec({ rpm: 5, tpm: 1000 });
      const { store, events } = await fresh(account(), [key]);
      const zero = { tokens: 0, holdNano: 0 };
      await settle(store, held(await store.admit(request(key, account(), T, zero))), 0, T, 0); // count_tokens
      held(await store.admit(request(key, account(), T + 1, zero))); // never settled: its replica crashed
      // Past the hold TTL the lost zero hold is reclaimed inside the next admission, and a minute later the window
      // drops the zero-token entries from its running sum.
      const after = held(await store.admit(request(key, account(), T + HOLD_TTL + 2)));
      await settle(store, after, 700, T + HOLD_TTL + 2);
      const later = held(await store.admit(request(key, account(), T + 61_000 + HOLD_TTL)));
      await settle(store, later, 300, T + 61_000 + HOLD_TTL);
      expect(await store.ledger('acme')).toMatchObject({ spentNano: 1000, heldNano: 0, openHolds: 0 });
      expect((await events('acme')).map((e) => e.costNano)).toEqual([0, 700, 300]);
    });

    it('keeps the largest amount exact, and refuses one nano more', async () => {
      const acct = account({ trialCreditNano: 0, credits: [{ id: 'max', amountNano: MAX_AMOUNT }] });
      const { store } = await fresh(acct);
      const h = held(await store.admit(request(keyRec(), acct, T, { holdNano: MAX_AMOUNT, tokens: MAX_AMOUNT })));
      expect(await store.ledger('acme')).toMatchObject({ creditedNano: MAX_AMOUNT, heldNano: MAX_AMOUNT, openHolds: 1 });
      expect(await store.admit(request(keyRec(), acct, T, { holdNano: 1 }))).toMatchObject({ ok: false, code: 'insufficient_balance' });
      await settle(store, h, MAX_AMOUNT - 1, T);
      expect(await store.view('acme', 'k1', T)).toEqual({
        balanceNano: 1,
        keyMonthSpendNano: MAX_AMOUNT - 1,
        accountMonthSpendNano: MAX_AMOUNT - 1,
        keyMonthCacheHits: 0,
        keyMonthCacheSavedNano: 0,
      });
      held(await store.admit(request(keyRec(), acct, T, { holdNano: 1 })));
      expect(await store.admit(request(keyRec(), acct, T, { holdNano: 1 }))).toMatchObject({ ok: false, code: 'insufficient_balance' });
    });

    it('refuses an amount that is not a whole number from 0 to MAX_AMOUNT, and changes nothing', async () => {
      const { store } = await fresh();
      for (const bad of [-1, 0.5, MAX_AMOUNT + 1, Number.NaN, Number.POSITIVE_INFINITY]) {
        await expect(store.admit(request(keyRec(), account(), T, { holdNano: bad }))).rejects.toThrow(RangeError);
        await expect(store.admit(request(keyRec(), account(), T, { tokens: bad }))).rejects.toThrow(RangeError);
      }
      const h = held(await store.admit(request(keyRec(), account(), T)));
      await expect(store.settle(h, { costNano: -1, tokens: 0, event: usage(h, 0, T) })).rejects.toThrow(RangeError);
      expect(await store.ledger('acme')).toMatchObject({ spentNano: 0, heldNano: 1000, openHolds: 1 });
    });

    it('gives the RPM and TPM slot back when a call is refused after admission', async () => {
      const key = keyRec({ rpm: 2, tpm: 1000 });
      const { store, events } = await fresh(account(), [key]);
      const refused = held(await store.admit(request(key, account(), T, { tokens: 1000 })));
      await store.settle(refused, { costNano: 0, tokens: 0, event: usage(refused, 0, T, 400), freeSlot: true });
      const a = held(await store.admit(request(key, account(), T + 1, { tokens: 1000 })));
      await settle(store, a, 10, T + 1, 500);
      held(await store.admit(request(key, account(), T + 2, { tokens: 500 })));
      expect(await store.admit(request(key, account(), T + 3, { tokens: 1 }))).toMatchObject({ ok: false, code: 'rate_limited' });
      expect((await events('acme')).map((e) => e.status)).toEqual([400, 200]);
      expect(await store.ledger('acme')).toMatchObject({ spentNano: 10, openHolds: 1 });
    });

    it('shows balance, month spend and keeps ledger totals equal to the usage events', async () => {
      const { store, events } = await fresh(account({ credits: [{ id: 'c', amountNano: 2_000_000_000 }] }));
      const costs = [1234, 0, 98_765_432, 5];
      for (const [i, cost] of costs.entries()) {
        const h = held(await store.admit(request(keyRec(), account(), T + i, { holdNano: 100_000_000 })));
        await settle(store, h, cost, T + i, 1);
      }
      await store.record({ ...usage({ id: 'refused', account: 'acme', key: 'k1', tokens: 0, holdNano: 0, month: '2026-11' }, 0, T), status: 429 });
      const spent = costs.reduce((s, c) => s + c, 0);
      expect(await store.view('acme', 'k1', T + 10)).toEqual({
        balanceNano: 2_001_000_000 - spent,
        keyMonthSpendNano: spent,
        accountMonthSpendNano: spent,
        keyMonthCacheHits: 0,
        keyMonthCacheSavedNano: 0,
      });
      expect(await store.view('acme', 'other-key', T + 10)).toMatchObject({ keyMonthSpendNano: 0 });
      const evs = await events('acme');
      expect(evs).toHaveLength(5);
      const ledger = await store.ledger('acme');
      expect(ledger.spentNano).toBe(evs.reduce((s, e) => s + e.costNano, 0));
      expect(ledger.feeNano).toBe(evs.reduce((s, e) => s + e.feeNano, 0));
      expect(ledger).toMatchObject({ heldNano: 0, openHolds: 0 });
    });

    it('refuses a key at or past its expiry with its own code, at lookup and admission; a key short of it is admitted', async () => {
      const probe = await make({ holdTtlMs: HOLD_TTL });
      const t = await probe.clock();
      await probe.close();
      const gone = keyRec({ hash: 'cd'.repeat(32), name: 'gone', expiresAt: t - 1 });
      const live = keyRec({ name: 'live', expiresAt: t + 600_000 });
      const { store, clock } = await fresh(account(), [gone, live]);
      const now = await clock();
      expect(await store.findKey(gone.hash)).toMatchObject({ name: 'gone', expired: true, revoked: false });
      expect(await store.findKey(live.hash)).toMatchObject({ name: 'live', expired: false, expiresAt: t + 600_000 });
      expect(await store.admit(request(gone, account(), now))).toMatchObject({ ok: false, code: 'key_expired' });
      held(await store.admit(request(live, account(), now)));
    });

    it('stops a key at once when an update moves its expiry into the past, though the caller holds the old record; calls admitted before settle', async () => {
      const probe = await make({ holdTtlMs: HOLD_TTL });
      const t = await probe.clock();
      await probe.close();
      const before = keyRec({ expiresAt: t + 600_000 });
      const { store, clock } = await fresh(account(), [before]);
      const inFlight = held(await store.admit(request(before, account(), await clock())));
      await store.applyConfig(snapshot([account()]), [{ ...before, expiresAt: t - 1000 }]);
      // `before` is what a replica's key cache still holds: the store's expiry decides, not the copy.
      expect(await store.admit(request(before, account(), await clock()))).toMatchObject({ ok: false, code: 'key_expired' });
      await settle(store, inFlight, 777, await clock());
      expect(await store.ledger('acme')).toMatchObject({ spentNano: 777, openHolds: 0 });
      // Unlike revocation, an expiry can be moved forward again: the key works again.
      await store.applyConfig(snapshot([account()]), [{ ...before, expiresAt: t + 600_000 }]);
      held(await store.admit(request(before, account(), await clock())));
      await store.applyConfig(snapshot([account()]), [{ ...before, expiresAt: null }]);
      expect(await store.findKey(before.hash)).toMatchObject({ expired: false });
      held(await store.admit(request(before, account(), await clock())));
    });

    it("counts a hit settled with cache: hit in the key's month (hits and saved), beside the spend", async () => {
      const { store } = await fresh();
      const h = held(await store.admit(request(keyRec(), account(), T, { tokens: 0 })));
      await store.settle(h, { costNano: 300, tokens: 0, event: { ...usage(h, 300, T), cache: 'hit', cacheSavedNano: 700 } });
      const m = held(await store.admit(request(keyRec(), account(), T + 1)));
      await store.settle(m, { costNano: 1000, tokens: 10, event: { ...usage(m, 1000, T + 1), cache: 'miss' } });
      expect(await store.view('acme', 'k1', T + 2)).toMatchObject({ keyMonthSpendNano: 1300, keyMonthCacheHits: 1, keyMonthCacheSavedNano: 700 });
    });

    it('keeps response cache entries per account, until their TTL, within the byte budget', async () => {
      const { store } = await fresh();
      const cache = store.responseCache;
      if (!cache) throw new Error(`${name} has no response cache`);
      const put = (
        account: string,
        sha: string,
        entry: string,
        now: number,
        budget: { bytes: number; ttlMs: number } = { bytes: 1000, ttlMs: 1000 },
      ): ReturnType<typeof cache.put> => cache.put({ account, sha, entry, ttlMs: budget.ttlMs, now, budgetBytes: budget.bytes });
      expect(await put('acme', 'a'.repeat(64), 'x'.repeat(400), T)).toEqual({ stored: true, evicted: 0 });
      expect(await cache.get('acme', 'a'.repeat(64), T + 999)).toBe('x'.repeat(400));
      expect(await cache.get('other', 'a'.repeat(64), T)).toBeNull();
      expect(await cache.get('acme', 'a'.repeat(64), T + 1000)).toBeNull();
      // Above the whole budget: not stored; the budget full: the soonest-expiring entries go first.
      expect(await put('acme', 'b'.repeat(64), 'y'.repeat(1001), T)).toEqual({ stored: false, evicted: 0 });
      expect(await put('acme', 'c'.repeat(64), 'c'.repeat(400), T, { bytes: 1000, ttlMs: 5000 })).toMatchObject({ stored: true });
      // a (expiring at T + 1000) goes before c (T + 5000), then c.
      expect(await put('acme', 'd'.repeat(64), 'd'.repeat(400), T + 1, { bytes: 1000, ttlMs: 5000 })).toEqual({ stored: true, evicted: 1 });
      expect(await cache.get('acme', 'a'.repeat(64), T + 2)).toBeNull();
      expect(await cache.get('acme', 'c'.repeat(64), T + 2)).toBe('c'.repeat(400));
      expect(await put('acme', 'e'.repeat(64), 'e'.repeat(400), T + 2, { bytes: 1000, ttlMs: 5000 })).toEqual({ stored: true, evicted: 1 });
      expect(await cache.get('acme', 'c'.repeat(64), T + 3)).toBeNull();
      expect(await cache.get('acme', 'd'.repeat(64), T + 3)).toBe('d'.repeat(400));
      expect(await cache.get('acme', 'e'.repeat(64), T + 3)).toBe('e'.repeat(400));
    });
  });
}
