// TokenCache.invalidate: a token its resource refused is dropped once; a token fetched meanwhile is kept.
import { describe, expect, it } from 'vitest';
import { TokenCache } from './token-cache.ts';

describe('TokenCache.invalidate', () => {
  it('drops the refused token (the next get fetches anew) but not a newer one', async () => {
    let n = 0;
    let now = 1_000_000;
    const cache = new TokenCache(
      async () => ({ token: `t${++n}`, expiresOnTimestamp: now + 3_600_000 }),
      () => now,
    );
    expect(await cache.get()).toBe('t1');
    expect(await cache.get()).toBe('t1');
    cache.invalidate('t1');
    expect(await cache.get()).toBe('t2');
    // Calls refused with the old token while t2 was fetched: t2 stays.
    cache.invalidate('t1');
    now += 1000;
    expect(await cache.get()).toBe('t2');
    expect(n).toBe(2);
  });
});
