// The live leases of an account and of a key (gateway/state/lua/lease.lua counts them as they are granted and given
// back, and forgets one whose process died at its deadline), as every lease script reads them: a request for leases
// back and a revocation wait on these counts. Three stores on one real Redis stand for three gateway processes.
import { describe, expect, it } from 'vitest';
import { useLeaseStores } from '../../test/helpers/lease-stores.ts';
import { accountKeys } from '../contract/redis-keys.ts';
import { RedisStore } from './redis-store.ts';
import { account, held, keyRec, request, snapshot } from './store-suite-fixtures.ts';
import type { LeaseBatch, LeaseReply } from './leases.ts';

const stores = useLeaseStores('leases-live');

const T = Date.UTC(2026, 10, 30, 12, 0, 0);
// Long enough that no lease ends on its own timer during a test; its deadline is T + LIFE + GRACE.
const LIFE = 60_000;
const GRACE = 5000;

type Run = (key: string, batch: LeaseBatch, now: number) => Promise<LeaseReply>;

function runner(s: RedisStore): Run {
  const r = (s as unknown as { runner: { run(a: string, k: string, b: LeaseBatch, now: number): Promise<LeaseReply> } }).runner;
  return (key, batch, now) => r.run('acme', key, batch, now);
}

describe('live leases', () => {
  it('are counted per key and per account as granted and given back; a dead process’s lease stops counting at its deadline', async () => {
    const prefix = stores.prefix();
    const [a, b, c] = await Promise.all([0, 1, 2].map(() => stores.connect({ lifeMs: LIFE, graceMs: GRACE }, prefix)));
    if (!a || !b || !c) throw new Error('three stores');
    const acct = account();
    const k1 = keyRec({ name: 'k1', hash: '1'.repeat(64) });
    const k2 = keyRec({ name: 'k2', hash: '2'.repeat(64) });
    await a.applyConfig(snapshot([acct]), [k1, k2]);
    for (const [s, k] of [
      [a, k1],
      [b, k1],
      [c, k2],
    ] as const)
      expect(held(await s.admit(request(k, acct, T))).lease).toBeDefined();

    const run = runner(a);
    const live = async (key: string, scope: 'key' | 'account', now = T + 1): Promise<number> => (await run(key, { ds: scope }, now)).live;
    expect([await live('k1', 'key'), await live('k2', 'key'), await live('k1', 'account')]).toEqual([2, 1, 3]);

    // b gives its lease back: one fewer for k1 and for the account.
    await b.leases?.releaseAll();
    expect([await live('k1', 'key'), await live('k2', 'key'), await live('k1', 'account')]).toEqual([1, 1, 2]);

    // c dies holding its lease (never given back): it counts until its deadline, then not.
    expect(await live('k2', 'key', T + LIFE + GRACE - 1)).toBe(1);
    expect(await live('k2', 'key', T + LIFE + GRACE)).toBe(0);
    // a's lease ended at the same deadline; giving it back later finds nothing to count down.
    expect(await live('k1', 'account', T + LIFE + GRACE)).toBe(0);
    await a.leases?.releaseAll();
    expect(await live('k1', 'account', T + LIFE + GRACE + 1)).toBe(0);

    // Nothing left behind: no lease, no count, no index entry (a revocation's wait reads EXISTS of the hash first).
    const keys = accountKeys(prefix, 'acme');
    expect(await a.redis.exists(keys.leases, keys.leaseEnds)).toBe(0);
  });

  it('a request for leases back marks the key until its end; read after that, the mark is gone', async () => {
    const prefix = stores.prefix();
    const s = await stores.connect({ lifeMs: LIFE, graceMs: GRACE }, prefix);
    const acct = account();
    const k1 = keyRec({ name: 'k1', hash: '1'.repeat(64) });
    await s.applyConfig(snapshot([acct]), [k1]);
    const run = runner(s);
    expect((await run('k1', { d: 1000, ds: 'key' }, T)).demand).toBe(true);
    expect((await run('k1', { ds: 'key' }, T + 999)).demand).toBe(true);
    expect((await run('k1', { ds: 'key' }, T + 1000)).demand).toBe(false);
    expect(await s.redis.exists(accountKeys(prefix, 'acme').leases)).toBe(0);
  });
});
