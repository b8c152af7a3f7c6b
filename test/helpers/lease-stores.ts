// Redis stores with leased admission on one real Redis per test file, each standing for a gateway process: a fresh
// prefix per deployment, every store closed after its test (unless the test closes or kills it itself).
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { LeaseOptions } from '../../gateway/state/leases.ts';
import { RedisStore } from '../../gateway/state/redis-store.ts';
import { startRedis, type TestRedis } from './redis.ts';

export interface LeaseStores {
  /** A new prefix on the file's Redis: one deployment, which several stores may share. */
  prefix(): string;
  /** A store with leases on that prefix (a new one when omitted), closed after the test. */
  connect(leases: LeaseOptions, prefix?: string): Promise<RedisStore>;
  /** A store the test closes or kills itself: not closed after it. */
  forget(s: RedisStore): void;
}

export function useLeaseStores(name: string): LeaseStores {
  let redis: TestRedis | undefined;
  let n = 0;
  let open: RedisStore[] = [];
  beforeAll(async () => {
    redis = await startRedis(name);
  });
  afterEach(async () => {
    await Promise.all(open.map((s) => s.close()));
    open = [];
  });
  afterAll(async () => {
    await redis?.stop();
  });
  const started = (): TestRedis => {
    if (!redis) throw new Error('useLeaseStores: the Redis is started in beforeAll');
    return redis;
  };
  const prefix = (): string => `${started().prefix}-${++n}`;
  return {
    prefix,
    async connect(leases, p = prefix()) {
      const s = await RedisStore.connect({ url: started().url, prefix: p, leases });
      open.push(s);
      return s;
    },
    forget(s) {
      open = open.filter((x) => x !== s);
    },
  };
}
