// A flush of many leased settles (one run of gateway/state/lua/lease.lua, which sums the batch's amounts, removes its
// slots together and takes its holds off the lease once) leaves Redis exactly as the same settles flushed one by one.
// Two stores on one real Redis, the same calls in each; every key of each compared field by field.
import { describe, expect, it } from 'vitest';
import { useLeaseStores } from '../../test/helpers/lease-stores.ts';
import type { CompiledAccount, KeyRecord } from '../contract/snapshot.ts';
import { RedisStore } from './redis-store.ts';
import { account, held, keyRec, request, snapshot, usage } from './store-suite-fixtures.ts';
import type { LeaseBatch, LeaseOptions, LeaseReply } from './leases.ts';
import type { AdmitRequest, Hold, Settlement } from './store.ts';

const stores = useLeaseStores('leases-batch');

const T = Date.UTC(2026, 10, 30, 12, 0, 0);

interface Internals {
  runner: { run(a: string, k: string, b: LeaseBatch, now: number): Promise<LeaseReply> };
  leases: { proc: string; byId: Map<string, { pending: NonNullable<LeaseBatch['s']> }> };
}

async function store(acct: CompiledAccount, key: KeyRecord, opts: LeaseOptions = {}): Promise<RedisStore> {
  const s = await stores.connect({ flushMs: 3_600_000, ...opts });
  await s.applyConfig(snapshot([acct]), [key]);
  return s;
}

/** Every key of the store, its name without the prefix and every lease id without the process's random part. */
async function dump(s: RedisStore): Promise<Record<string, unknown>> {
  const proc = (s as unknown as Internals).leases.proc;
  const norm = (x: string): string => x.split(proc).join('P').split(s.prefix).join('');
  const out: Record<string, unknown> = {};
  for (const k of (await s.redis.keys(`${s.prefix}:*`)).sort()) {
    const name = norm(k.slice(s.prefix.length));
    const type = await s.redis.type(k);
    if (type === 'hash') out[name] = Object.fromEntries(Object.entries(await s.redis.hgetall(k)).map(([f, v]) => [norm(f), norm(v)]));
    else if (type === 'zset') out[name] = (await s.redis.zrange(k, 0, -1, 'WITHSCORES')).map(norm);
    else if (type === 'set') out[name] = (await s.redis.smembers(k)).map(norm).sort();
    else if (type === 'string') out[name] = norm((await s.redis.get(k)) ?? '');
    else if (type === 'stream') out[name] = 'stream';
  }
  return out;
}

interface Call {
  req: (key: KeyRecord, acct: CompiledAccount) => AdmitRequest;
  settle: (h: Hold) => Settlement;
}

/** The calls admitted from a lease in each store, settled, and their settles waiting for a flush. */
async function pendingOf(s: RedisStore, calls: Call[], key: KeyRecord, acct: CompiledAccount): Promise<NonNullable<LeaseBatch['s']>> {
  const reqs = calls.map((c) => c.req(key, acct));
  const holds = [];
  for (const r of reqs) holds.push(held(await s.admit(r)));
  expect(holds.every((h) => h.lease !== undefined)).toBe(true);
  for (let i = 0; i < holds.length; i++) await s.settle(holds[i] as Hold, (calls[i] as Call).settle(holds[i] as Hold));
  const leases = [...(s as unknown as Internals).leases.byId.values()];
  return leases.flatMap((l) => l.pending);
}

/** The same calls in two stores: flushed in one batch in the first (twice over, as a retried flush), one by one in the second. */
type Pending = NonNullable<LeaseBatch['s']>;

async function compare(
  acct: CompiledAccount,
  key: KeyRecord,
  calls: Call[],
  opts: LeaseOptions = {},
  rewrite: (p: Pending) => Pending = (p) => p,
): Promise<Record<string, unknown>> {
  // The same event ids in both stores: each request is made once and given to both.
  const made = calls.map((c) => {
    let r: AdmitRequest | null = null;
    return { ...c, req: (k: KeyRecord, a: CompiledAccount) => (r ??= c.req(k, a)) };
  });
  const batched = await store(acct, key, opts);
  const single = await store(acct, key, opts);
  const a = rewrite(await pendingOf(batched, made, key, acct));
  const b = rewrite(await pendingOf(single, made, key, acct));
  expect(a.map((x) => x.id)).toEqual(b.map((x) => x.id));
  const runA = (s: NonNullable<LeaseBatch['s']>): Promise<LeaseReply> =>
    (batched as unknown as Internals).runner.run(acct.name, key.name, { s, h: key.hash }, T + 100);
  const runB = (s: NonNullable<LeaseBatch['s']>): Promise<LeaseReply> =>
    (single as unknown as Internals).runner.run(acct.name, key.name, { s, h: key.hash }, T + 100);
  await runA([...a, ...a]);
  for (const x of b) await runB([x]);
  for (const x of b) await runB([x]);
  const [da, db] = [await dump(batched), await dump(single)];
  expect(da).toEqual(db);
  expect((await batched.usageEvents(acct.name)).map((e) => [e.eventId, e.costNano])).toEqual(
    (await single.usageEvents(acct.name)).map((e) => [e.eventId, e.costNano]),
  );
  expect(await batched.ledger(acct.name)).toEqual(await single.ledger(acct.name));
  return da;
}

const plain = (cost: number, over: Partial<Settlement> = {}, reqOver: Partial<AdmitRequest> = {}): Call => ({
  req: (key, acct) => request(key, acct, T + 1, reqOver),
  settle: (h) => ({ costNano: cost, tokens: 7, event: usage(h, cost, T), ...over }),
});

describe('a batch of leased settles equals the same settles one by one', () => {
  it('costs, fees and windows under RPM, TPM and budget limits: sums written once, the same state', async () => {
    const acct = account({ trialCreditNano: 10_000_000 });
    const key = keyRec({ rpm: 10_000, tpm: 1_000_000, monthlyBudgetNano: 5_000_000 });
    const d = await compare(acct, key, [plain(700), plain(0), plain(1_234), plain(999_999), plain(1), plain(700)]);
    expect(Object.keys(d).length).toBeGreaterThan(5);
  });

  it('a lease whose every slot is used: the last slot takes the token reservation with it', async () => {
    const acct = account({ trialCreditNano: 10_000_000 });
    const key = keyRec({ tpm: 1_000_000 });
    const d = await compare(acct, key, [plain(10), plain(20), plain(30), plain(40)], { maxSlots: 4 });
    // No slot or reservation of the lease is left, only the four calls' actual tokens.
    const tpmn = Object.entries(d).find(([k]) => k.includes(':tpmn:'))?.[1] as Record<string, string>;
    expect(Object.keys(tpmn).filter((f) => f.includes('#'))).toEqual([]);
    expect(tpmn._sum).toBe('28');
  });

  it('cache hits and freed slots (no window entry), and holds larger than what the lease has left', async () => {
    const acct = account({ trialCreditNano: 10_000_000 });
    const key = keyRec({ rpm: 1_000, tpm: 100_000 });
    const hit = (cost: number): Call => ({
      req: (k, a) => request(k, a, T + 1),
      settle: (h) => ({ costNano: cost, tokens: 3, event: { ...usage(h, cost, T), cache: 'hit', cacheSavedNano: 4_321 } }),
    });
    await compare(acct, key, [hit(5), plain(9, { freeSlot: true }), hit(0), plain(11), plain(2_000_000, {}, { holdNano: 1_000_000 })]);
  });

  it('amounts of more than 13 digits are written exactly (no sum in a Lua number past 2^53)', async () => {
    // Costs of 18 digits (the most an amount has), as the settles carry them (decimal strings): two of them sum past 2^53.
    const big = '900000000000000001';
    const acct = account({ trialCreditNano: 9_000_000_000_000_000 });
    const key = keyRec({});
    const calls = [
      plain(1, {}, { holdNano: 100_000_000_000_003 }),
      plain(1, {}, { holdNano: 100_000_000_000_003 }),
      plain(3, {}, { holdNano: 100_000_000_000_003 }),
    ];
    const d = await compare(acct, key, calls, {}, (p) => p.map((x, i) => (i < 2 ? { ...x, cost: big, fee: '0' } : x)));
    const acctHash = Object.entries(d).find(([k]) => k.endsWith('}:acct'))?.[1] as Record<string, string>;
    expect(acctHash.spent).toBe((2n * BigInt(big) + 3n).toString());
  });
});
