// The shared Store suite against a real Redis, plus what only Redis has: hash-tagged keys and the stream format.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, type TestRedis } from '../../test/helpers/redis.ts';
import { LuaScript } from './lua-script.ts';
import { accountKeys, RedisStore } from './redis-store.ts';
import { storeSuite } from './store-suite.ts';

let redis: TestRedis;
let n = 0;

beforeAll(async () => {
  redis = await startRedis('store');
});

afterAll(async () => {
  await redis?.stop();
});

storeSuite('RedisStore', async (timing) => {
  const store = await RedisStore.connect({ url: redis.url, prefix: `${redis.prefix}-${++n}`, ...timing });
  return { store, events: (account) => store.usageEvents(account), clock: () => serverTime(store), close: () => store.close() };
});

/** The Redis server's clock (ms): what admit.lua and findKey judge expiry by. */
async function serverTime(store: RedisStore): Promise<number> {
  const [sec, usec] = await store.redis.time();
  return Number(sec) * 1000 + Math.floor(Number(usec) / 1000);
}

describe('RedisStore: key expiry on the server clock', () => {
  it("decides by Redis's TIME: a replica whose clock is hours off (a clock step) decides as every other", async () => {
    const store = await RedisStore.connect({ url: redis.url, prefix: `${redis.prefix}-expiry` });
    try {
      const t = await serverTime(store);
      const acct = { name: 'acme', plan: 'p', trialCreditNano: 10 ** 12, credits: [] };
      const base = { display: 'd', account: 'acme', monthlyBudgetNano: null, rpm: null, tpm: null, models: null, revoked: false };
      const soon = { ...base, hash: 'a1'.repeat(32), name: 'soon', expiresAt: t + 3_600_000 };
      const gone = { ...base, hash: 'b2'.repeat(32), name: 'gone', expiresAt: t - 1000 };
      await store.applyConfig({ schema: 1, version: 'x', plans: {}, models: {}, accounts: { acme: acct } }, [soon, gone]);
      const admit = (key: typeof soon, now: number): Promise<unknown> =>
        store.admit({ eventId: `e-${key.name}-${now}`, key, account: acct, tokens: 1, holdNano: 1, now });
      // The replica's clock is 2 hours ahead: past `soon`'s expiry by its own reckoning, not by the server's.
      expect(await admit(soon, t + 7_200_000)).toMatchObject({ ok: true });
      // And 2 hours behind: `gone` is still valid by its own clock, expired by the server's.
      expect(await admit(gone, t - 7_200_000)).toMatchObject({ ok: false, code: 'key_expired' });
      expect(await store.findKey(gone.hash)).toMatchObject({ expired: true });
      // A key published alone (made in the console) carries its expiry to admission too.
      const made = { ...base, hash: 'c3'.repeat(32), name: 'made', expiresAt: t - 1 };
      await store.publishKey(made);
      expect(await admit(made, t)).toMatchObject({ ok: false, code: 'key_expired' });
    } finally {
      await store.close();
    }
  });
});

describe('RedisStore specifics', () => {
  it('hash-tags every per-account key with the account, so one Cluster slot holds them', () => {
    for (const k of Object.values(accountKeys('svc', 'acme'))) expect(k).toMatch(/^svc:\{a:acme\}:/);
  });

  it('registers each account stream for the exporter and writes v=1 entries with the event as JSON', async () => {
    const prefix = `${redis.prefix}-stream`;
    const store = await RedisStore.connect({ url: redis.url, prefix });
    try {
      await store.applyConfig(
        { schema: 1, version: 'x', plans: {}, models: {}, accounts: { acme: { name: 'acme', plan: 'p', trialCreditNano: 0, credits: [] } } },
        [],
      );
      expect(await redis.client.smembers(`${prefix}:usage:streams`)).toEqual([`${prefix}:{a:acme}:usage`]);
      await store.record({
        eventId: 'e1',
        createdAt: new Date().toISOString(),
        account: 'acme',
        apiKey: 'k',
        taskType: null,
        endpoint: 'embeddings',
        requestedModel: 'm',
        servedModel: null,
        upstream: null,
        fallback: false,
        fallbackReason: null,
        status: 402,
        errorCode: 'insufficient_balance',
        stream: false,
        inputTokens: 0,
        outputTokens: 0,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
        costNano: 0,
        feeNano: 0,
        latencyMs: 1,
        ttftMs: null,
      });
      const entries = await redis.client.xrange(`${prefix}:{a:acme}:usage`, '-', '+');
      expect(entries).toHaveLength(1);
      const fields = entries[0]?.[1] ?? [];
      expect(fields.slice(0, 3)).toEqual(['v', '1', 'event']);
      expect(JSON.parse(fields[3] ?? '{}')).toMatchObject({ eventId: 'e1', status: 402 });
    } finally {
      await store.close();
    }
  });

  it("reads an account's money for status in one pipeline: credited, spent, this month's spend of it and of each key", async () => {
    const prefix = `${redis.prefix}-spend`;
    const store = await RedisStore.connect({ url: redis.url, prefix });
    try {
      const acme = { name: 'acme', plan: 'p', trialCreditNano: 700, credits: [{ id: 'c1', amountNano: 300 }] };
      await store.applyConfig({ schema: 1, version: 'x', plans: {}, models: {}, accounts: { acme } }, []);
      // As settle.lua keeps them (gateway/contract/redis-keys.ts): spent in acct, "<month>" and "<month>|<key>" in spend.
      const a = accountKeys(prefix, 'acme');
      await redis.client.hset(a.acct, 'spent', '450');
      await redis.client.hset(a.spend, '2026-10', '200', '2026-10|k1', '200', '2026-11', '250', '2026-11|k1', '240', '2026-11|k2', '10');
      expect(await store.monthSpend('acme', ['k1', 'k2', 'k3'], '2026-11')).toEqual({
        creditedNano: 1000,
        spentNano: 450,
        accountMonthNano: 250,
        keyMonthNano: { k1: 240, k2: 10, k3: 0 },
      });
      expect(await store.monthSpend('nobody', [], '2026-11')).toEqual({ creditedNano: 0, spentNano: 0, accountMonthNano: 0, keyMonthNano: {} });
    } finally {
      await store.close();
    }
  });

  it('publishes the compiled snapshot for cluster-mode gateways', async () => {
    const prefix = `${redis.prefix}-snap`;
    const store = await RedisStore.connect({ url: redis.url, prefix });
    try {
      await store.applyConfig({ schema: 1, version: 'v42', plans: {}, models: {}, accounts: {} }, []);
      expect(JSON.parse((await redis.client.get(`${prefix}:config:snapshot`)) ?? '{}')).toMatchObject({ version: 'v42' });
    } finally {
      await store.close();
    }
  });

  it('sends the commands of one event-loop turn in one socket write, and one call at a time at once', async () => {
    const store = await RedisStore.connect({ url: redis.url, prefix: `${redis.prefix}-batch` });
    try {
      const socket = (store.redis as { stream?: unknown }).stream as {
        _writev: (chunks: unknown[], cb: unknown) => unknown;
        _write: (chunk: unknown, enc: unknown, cb: unknown) => unknown;
      };
      const seen: number[] = [];
      const writev = socket._writev.bind(socket);
      const write = socket._write.bind(socket);
      socket._writev = (chunks: unknown[], cb: unknown) => {
        seen.push(chunks.length);
        return writev(chunks, cb);
      };
      socket._write = (chunk: unknown, enc: unknown, cb: unknown) => {
        seen.push(1);
        return write(chunk, enc, cb);
      };
      const hashes = Array.from({ length: 20 }, (_, i) => `${i}`.repeat(64).slice(0, 64));
      expect(await Promise.all(hashes.map((h) => store.findKey(h)))).toEqual(hashes.map(() => null));
      expect(seen).toEqual([20]);
      seen.length = 0;
      expect(await store.findKey(hashes[0] as string)).toBeNull();
      expect(seen).toEqual([1]);
    } finally {
      await store.close();
    }
  });
});

describe('Lua scripts refuse a bad amount before their first write', () => {
  const admit = new LuaScript('admit', true);
  const settle = new LuaScript('settle', true);

  async function keyspace(prefix: string): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    for (const k of (await redis.client.keys(`${prefix}:*`)).sort()) {
      const type = await redis.client.type(k);
      out[k] = JSON.stringify(
        type === 'hash'
          ? await redis.client.hgetall(k)
          : type === 'zset'
            ? await redis.client.zrange(k, 0, -1, 'WITHSCORES')
            : type === 'set'
              ? (await redis.client.smembers(k)).sort()
              : type === 'stream'
                ? await redis.client.xlen(k)
                : await redis.client.get(k),
      );
    }
    return out;
  }

  it.each(['-0', '-5', '0.5', '1e+17', '', 'abc', '1234567890123456789'])('admit and settle with %j change nothing and say why', async (bad) => {
    const prefix = `${redis.prefix}-lua-${++n}`;
    const store = await RedisStore.connect({ url: redis.url, prefix, holdTtlMs: 1 });
    try {
      await store.applyConfig(
        { schema: 1, version: 'x', plans: {}, models: {}, accounts: { acme: { name: 'acme', plan: 'p', trialCreditNano: 5000, credits: [] } } },
        [],
      );
      // An expired hold waits to be reclaimed: a script that wrote before checking would release it.
      const a = accountKeys(prefix, 'acme');
      await redis.client.zadd(a.holds, 1, 'old');
      await redis.client.hset(a.holdrec, 'old', 'k|2026-11|0|0');
      const calls = `${prefix}:{a:acme}:tpm:k`;
      const tpmn = `${prefix}:{a:acme}:tpmn:k`;
      const before = await keyspace(prefix);
      const now = Date.now();
      await expect(
        admit.run(
          redis.client,
          [a.acct, a.revoked, a.holds, a.holdrec, a.spend, a.held, calls, tpmn],
          ['id1', 'h', 'k', now, '2026-11', -1, -1, -1, '10', bad, now + 1000, '0'],
        ),
      ).rejects.toThrow(/holdNano is not a non-negative integer/);
      await expect(
        admit.run(
          redis.client,
          [a.acct, a.revoked, a.holds, a.holdrec, a.spend, a.held, calls, tpmn],
          ['id1', 'h', 'k', now, '2026-11', -1, -1, -1, bad, '10', now + 1000, '0'],
        ),
      ).rejects.toThrow(/tokens is not a non-negative integer/);
      await expect(
        settle.run(
          redis.client,
          [a.acct, a.holds, a.holdrec, a.held, a.spend, a.settled, tpmn, a.usage, calls],
          ['old', 'k', '2026-11', bad, '0', '0', now, 1000, '{}', 0, '0'],
        ),
      ).rejects.toThrow(/costNano is not a non-negative integer/);
      expect(await keyspace(prefix)).toEqual(before);
    } finally {
      await store.close();
    }
  });
});
