// The shared Store suite against a real Redis, plus what only Redis has: hash-tagged keys and the stream format.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, type TestRedis } from '../../test/helpers/redis.ts';
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
  return { store, events: (account) => store.usageEvents(account), close: () => store.close() };
});

describe('RedisStore specifics', () => {
  it('hash-tags every per-account key with the account, so one Cluster slot holds them', () => {
    for (const k of Object.values(accountKeys('svc', 'acme'))) expect(k).toMatch(/^svc:\{a:acme\}:/);
  });

  it('registers each account stream for the exporter and writes v=1 entries with the event as JSON', async () => {
    const prefix = `${redis.prefix}-stream`;
    const store = await RedisStore.connect({ url: redis.url, prefix });
    try {
      await store.applyConfig({ schema: 1, version: 'x', plans: {}, models: {}, accounts: { acme: { name: 'acme', plan: 'p', trialCreditNano: 0, credits: [] } } }, []);
      expect(await redis.client.smembers(`${prefix}:usage:streams`)).toEqual([`${prefix}:{a:acme}:usage`]);
      await store.record({
        eventId: 'e1', createdAt: new Date().toISOString(), account: 'acme', apiKey: 'k', taskType: null, endpoint: 'embeddings',
        requestedModel: 'm', servedModel: null, upstream: null, fallback: false, fallbackReason: null, status: 402, errorCode: 'insufficient_balance',
        stream: false, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costNano: 0, feeNano: 0, latencyMs: 1, ttftMs: null,
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
      const socket = store.redis.stream as unknown as { _writev: (chunks: unknown[], cb: unknown) => unknown; _write: (chunk: unknown, enc: unknown, cb: unknown) => unknown };
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
