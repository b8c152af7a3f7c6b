// A TPM refusal's retry-after is when enough of the key's oldest calls leave its window, however far back that is: in
// memory, and on a real Redis, where admit.lua reads the oldest calls a page at a time (never the whole window).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, type TestRedis } from '../../test/helpers/redis.ts';
import { MemoryUsageSink } from '../usage/event.ts';
import { MemoryStore } from './memory-store.ts';
import { RedisStore } from './redis-store.ts';
import { account, held, keyRec, request, snapshot } from './store-suite-fixtures.ts';
import type { Store, StoreAdmin } from './store.ts';

let redis: TestRedis;
let n = 0;

beforeAll(async () => {
  redis = await startRedis('tpm-wait');
});
afterAll(async () => {
  await redis?.stop();
});

const T = Date.UTC(2026, 10, 30, 12, 0, 0);
const EXPECTED = ['rate_limited 30', 'rate_limited 45', 'rate_limited 50'];

async function waits(store: Store & StoreAdmin): Promise<string[]> {
  const key = keyRec({ tpm: 1000 });
  await store.applyConfig(snapshot([account()]), [key]);
  // 300 calls of 3 tokens, 100 ms apart: 900 of the 1000 tokens.
  for (let i = 0; i < 300; i++) held(await store.admit(request(key, account(), T + i * 100, { tokens: 3 })));
  const wait = async (tokens: number): Promise<string> => {
    const d = await store.admit(request(key, account(), T + 40_000, { tokens }));
    return d.ok ? 'admitted' : `${d.code} ${d.retryAfterSec}`;
  };
  // At T + 40 s: 400 tokens need the 100 oldest calls gone (the 100th, at T + 9.9 s, leaves at T + 69.9 s); 850 the
  // 250 oldest (T + 84.9 s); 1000 all 300 (T + 89.9 s).
  return [await wait(400), await wait(850), await wait(1000)];
}

async function onRedis(leases: boolean): Promise<string[]> {
  const store = await RedisStore.connect({ url: redis.url, prefix: `${redis.prefix}-${++n}`, leases: leases ? {} : null });
  try {
    return await waits(store);
  } finally {
    await store.close();
  }
}

describe("a TPM refusal's retry-after reaches as far back in the window as it must", () => {
  it('in memory', async () => {
    expect(await waits(new MemoryStore(new MemoryUsageSink()))).toEqual(EXPECTED);
  });

  it('on Redis', async () => {
    expect(await onRedis(false)).toEqual(EXPECTED);
  });

  it('on Redis with leased admission', async () => {
    expect(await onRedis(true)).toEqual(EXPECTED);
  });
});
