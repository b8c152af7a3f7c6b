// Leased admission (gateway/state/leases.ts) against a real Redis: the shared Store suite through the lease path,
// then what only leases have, with three stores on one Redis standing for three gateway processes.
import { afterAll, beforeAll } from 'vitest';
import { startRedis, type TestRedis } from '../../test/helpers/redis.ts';
import { RedisStore } from './redis-store.ts';
import { storeSuite } from './store-suite.ts';
import type { Store, StoreAdmin } from './store.ts';

let redis: TestRedis;
let n = 0;

beforeAll(async () => {
  redis = await startRedis('leases');
});

afterAll(async () => {
  await redis?.stop();
});

/**
 * The store as the suite reads it: settles waiting for a flush are written before a view, and the ledger (whose held
 * total counts a lease's unused slice as one open hold) is read once the leases are given back.
 */
function flushedReads(store: RedisStore): Store & StoreAdmin {
  const flush = (prop: string | symbol): Promise<void> => (prop === 'ledger' ? store.leases?.releaseAll() : store.leases?.flushAll()) ?? Promise.resolve();
  return new Proxy(store, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (prop === 'ledger' || prop === 'view')
        return async (...args: unknown[]) => {
          await flush(prop);
          return (v as (...a: unknown[]) => unknown).apply(target, args);
        };
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

storeSuite('RedisStore with admission leases', async (timing) => {
  const store = await RedisStore.connect({ url: redis.url, prefix: `${redis.prefix}-${++n}`, ...timing, leases: {} });
  return {
    store: flushedReads(store),
    events: async (account) => {
      await store.leases?.flushAll();
      return store.usageEvents(account);
    },
    clock: async () => {
      const [sec, usec] = await store.redis.time();
      return Number(sec) * 1000 + Math.floor(Number(usec) / 1000);
    },
    close: () => store.close(),
  };
});
