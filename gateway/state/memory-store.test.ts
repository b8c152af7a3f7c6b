import { describe, expect, it } from 'vitest';
import type { CompiledAccount, KeyRecord, Snapshot } from '../contract/snapshot.ts';
import { MemoryUsageSink, type UsageEvent } from '../usage/event.ts';
import { MemoryStore } from './memory-store.ts';
import { storeSuite } from './store-suite.ts';
import type { Hold } from './store.ts';

storeSuite('MemoryStore', async (timing) => {
  const sink = new MemoryUsageSink();
  const store = new MemoryStore(sink, timing);
  return { store, events: async (account) => sink.events.filter((e) => e.account === account), clock: async () => Date.now(), close: () => store.close() };
});

describe('MemoryStore: key expiry on the process clock, at the millisecond', () => {
  it('admits at expiresAt - 1 ms and refuses at expiresAt; lookups judge by the same clock', async () => {
    let now = Date.UTC(2026, 10, 25, 12, 0, 0);
    const store = new MemoryStore(new MemoryUsageSink(), { now: () => now });
    const acct: CompiledAccount = { name: 'acme', plan: 'p', trialCreditNano: 10 ** 12, credits: [] };
    const at = Date.UTC(2026, 10, 25, 12, 0, 10);
    const key: KeyRecord = {
      hash: 'h',
      name: 'k',
      display: 'd',
      account: 'acme',
      monthlyBudgetNano: null,
      rpm: null,
      tpm: null,
      models: null,
      revoked: false,
      expiresAt: at,
    };
    await store.applyConfig(
      {
        schema: 1,
        version: 't',
        plans: { p: { name: 'p', tier: 1, anthropicEndpoint: false, models: null, rpm: null, tpm: null } },
        accounts: { acme: acct },
        models: {},
      },
      [key],
    );
    const admit = (t: number): Promise<unknown> => store.admit({ eventId: `e${t}`, key, account: acct, tokens: 1, holdNano: 1, now: t });
    expect(await admit(at - 1)).toMatchObject({ ok: true });
    expect(await admit(at)).toMatchObject({ ok: false, code: 'key_expired' });
    now = at - 1;
    expect(await store.findKey('h')).toMatchObject({ expired: false });
    now = at;
    expect(await store.findKey('h')).toMatchObject({ expired: true });
    // A clock stepped back (NTP correction) makes the key valid again on this one process: memory has one clock.
    expect(await admit(at - 3_600_000)).toMatchObject({ ok: true });
  });
});

describe('MemoryStore: how long a settle is remembered', () => {
  it('still ignores a retried settle after 20,000 other calls of the account settled (bounded memory, O(1) each)', async () => {
    const sink = new MemoryUsageSink(100);
    const store = new MemoryStore(sink);
    const acct: CompiledAccount = { name: 'acme', plan: 'p', trialCreditNano: 10 ** 15, credits: [] };
    const key: KeyRecord = { hash: 'h', name: 'k', display: 'd', account: 'acme', monthlyBudgetNano: null, rpm: null, tpm: null, models: null, revoked: false };
    const snap: Snapshot = {
      schema: 1,
      version: 't',
      plans: { p: { name: 'p', tier: 1, anthropicEndpoint: false, models: null, rpm: null, tpm: null } },
      accounts: { acme: acct },
      models: {},
    };
    await store.applyConfig(snap, [key]);
    const now = Date.UTC(2026, 10, 1);
    const call = async (id: string): Promise<Hold> => {
      const d = await store.admit({ eventId: id, key, account: acct, tokens: 1, holdNano: 1, now });
      if (!d.ok) throw new Error(d.message);
      return d.hold;
    };
    const settle = (h: Hold): Promise<void> => store.settle(h, { costNano: 5, tokens: 1, event: { eventId: h.id, feeNano: 0 } as UsageEvent });
    const first = await call('first');
    await settle(first);
    for (let i = 0; i < 20_000; i++) await settle(await call(`c${i}`));
    await settle(first);
    expect((await store.ledger('acme')).spentNano).toBe(5 * 20_001);
  });
});
