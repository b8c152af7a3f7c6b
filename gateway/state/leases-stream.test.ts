// The usage events of leased calls (gateway/state/lua/lease.lua): written in one stream entry per flush, each once,
// and none left behind by a graceful drain. Against a real Redis.
import { describe, expect, it } from 'vitest';
import { useLeaseStores } from '../../test/helpers/lease-stores.ts';
import { entryEvents } from '../usage/event-schema.ts';
import { RedisStore } from './redis-store.ts';
import { account, held, keyRec, request, snapshot, usage } from './store-suite-fixtures.ts';
import type { LeaseBatch, LeaseReply } from './leases.ts';
import type { Hold } from './store.ts';

const stores = useLeaseStores('leases-stream');

const T = Date.UTC(2026, 10, 30, 12, 0, 0);
const acct = account();
const key = keyRec();

/** A store whose leases flush only when asked (or at release and drain): every settle of a test in one batch. */
async function store(prefix = stores.prefix()): Promise<RedisStore> {
  const s = await stores.connect({ flushMs: 3_600_000 }, prefix);
  await s.applyConfig(snapshot([acct]), [key]);
  return s;
}

async function entries(s: RedisStore): Promise<string[][]> {
  return (await s.redis.xrange(`${s.prefix}:{a:acme}:usage`, '-', '+')).map(([, fields]) => fields);
}

async function settleAll(s: RedisStore, holds: Hold[], cost: number): Promise<void> {
  for (const h of holds) await s.settle(h, { costNano: cost, tokens: 10, event: usage(h, cost, T) });
}

describe('usage events of leased calls', () => {
  it('a flush writes its settles’ events in one stream entry (format 2), in settle order; a settle sent again adds nothing', async () => {
    const s = await store();
    const holds: Hold[] = [];
    for (let i = 0; i < 5; i++) holds.push(held(await s.admit(request(key, acct, T + i))));
    expect(holds.every((h) => h.lease !== undefined)).toBe(true);
    await settleAll(s, holds, 700);
    expect(await entries(s)).toEqual([]);
    await s.leases?.flushAll();

    const written = await entries(s);
    expect(written).toHaveLength(1);
    expect(written[0]?.slice(0, 3)).toEqual(['v', '2', 'events']);
    const events = entryEvents(written[0] as string[]) as Array<{ eventId: string; costNano: number }>;
    expect(events.map((e) => [e.eventId, e.costNano])).toEqual(holds.map((h) => [h.id, 700]));
    expect((await s.ledger('acme')).spentNano).toBe(5 * 700);

    // Settled again (a retry): the calls are settled already, by id; no charge, no event.
    await settleAll(s, holds, 700);
    await s.leases?.flushAll();
    expect(await entries(s)).toHaveLength(1);
    expect((await s.usageEvents('acme')).map((e) => e.eventId)).toEqual(holds.map((h) => h.id));
    expect((await s.ledger('acme')).spentNano).toBe(5 * 700);
  });

  it('a flush Redis applied but whose answer was lost, sent again, writes no event twice', async () => {
    const s = await store();
    const holds = [held(await s.admit(request(key, acct, T))), held(await s.admit(request(key, acct, T + 1)))];
    await settleAll(s, holds, 500);
    const pending = s.leases ? [...(s.leases as unknown as { byId: Map<string, { pending: LeaseBatch['s'] }> }).byId.values()][0]?.pending : [];
    expect(pending).toHaveLength(2);
    // The same batch twice, as a flush retried after a timeout sends it.
    const runner = (s as unknown as { runner: { run(a: string, k: string, b: LeaseBatch, now: number): Promise<LeaseReply> } }).runner;
    const run = runner.run.bind(runner);
    await run('acme', key.name, { s: pending, h: key.hash }, T + 2);
    await run('acme', key.name, { s: pending, h: key.hash }, T + 2);
    expect((await s.usageEvents('acme')).map((e) => e.eventId)).toEqual(holds.map((h) => h.id));
    expect((await s.ledger('acme')).spentNano).toBe(1000);
  });

  it('one settle in a flush is an ordinary entry of format 1', async () => {
    const s = await store();
    const h = held(await s.admit(request(key, acct, T)));
    await settleAll(s, [h], 300);
    await s.leases?.flushAll();
    expect((await entries(s)).map((f) => f.slice(0, 3))).toEqual([['v', '1', 'event']]);
  });

  it('a graceful drain writes every settle still waiting for its flush: nothing lost', async () => {
    const prefix = stores.prefix();
    const draining = await store(prefix);
    stores.forget(draining);
    const holds: Hold[] = [];
    for (let i = 0; i < 4; i++) holds.push(held(await draining.admit(request(key, acct, T + i))));
    await settleAll(draining, holds, 900);
    await draining.close();

    const reader = await store(prefix);
    expect((await reader.usageEvents('acme')).map((e) => e.eventId)).toEqual(holds.map((h) => h.id));
    expect(await reader.ledger('acme')).toMatchObject({ spentNano: 4 * 900, heldNano: 0, openHolds: 0 });
  });
});
