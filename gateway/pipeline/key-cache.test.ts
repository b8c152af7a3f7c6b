// The bounded key cache on a real Redis store: least recently used keys go first, unknown keys never push known ones
// out nor reach Redis twice within a second, concurrent lookups share one read, and a key revoked while its record is
// cached is refused at the very next call (the whole gateway, over HTTP).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compile } from '../contract/compile.ts';
import { hashKey } from '../contract/keys.ts';
import { parseManifests } from '../config/manifests.ts';
import { build } from '../server.ts';
import { RedisStore } from '../state/redis-store.ts';
import type { Store } from '../state/store.ts';
import { basics as keysOnly, route } from '../../test/helpers/manifests.ts';
import { metricSum } from '../../test/helpers/prom.ts';
import { startRedis, type TestRedis } from '../../test/helpers/redis.ts';
import { KeyCache } from './key-cache.ts';

const PEPPER = 'key-cache-test-pepper';
let redis: TestRedis;
let store: RedisStore;
let reads = 0;
/** The real store, its findKey counted (how many lookups reached Redis). */
let counted: Store;
let keys: { builder: string; free: string };
const hash = (k: string): string => hashKey(k, PEPPER);

beforeAll(async () => {
  redis = await startRedis('key-cache');
  store = await RedisStore.connect({ url: redis.url, prefix: redis.prefix });
  const b = basics();
  keys = b.keys;
  const parsed = parseManifests(b.docs.map((doc, i) => ({ source: `t#${i}`, doc })));
  const compiled = compile(parsed.set, { pepper: PEPPER });
  await store.applyConfig(compiled.snapshot, compiled.keys);
  counted = new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === 'findKey') {
        return (h: string) => {
          reads++;
          return target.findKey(h);
        };
      }
      const v: unknown = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
});

afterAll(async () => {
  await store?.close();
  await redis?.stop();
});

/** Two plans, two accounts, a key each, and the mock model mock-mini. */
function basics(): ReturnType<typeof keysOnly> {
  const b = keysOnly();
  return { ...b, docs: [...b.docs, route('mock-mini', [{ name: 'mock-a', provider: 'mock' }])] };
}

/** A hash no key has (well formed as a hex HMAC). */
const unknownHash = (i: number): string => i.toString(16).padStart(64, 'f');

describe('KeyCache on Redis', () => {
  it('keeps the most recently used keys up to its size; a miss costs one Redis read', async () => {
    const cache = new KeyCache({ maxEntries: 1 });
    reads = 0;
    const now = Date.now();
    expect((await cache.find(counted, hash(keys.builder), now))?.name).toBe('builder-key');
    expect(reads).toBe(1);
    await cache.find(counted, hash(keys.builder), now + 1);
    expect(reads).toBe(1);
    // A second key pushes the least recently used one out: size 1.
    await cache.find(counted, hash(keys.free), now + 2);
    expect(cache.size).toBe(1);
    await cache.find(counted, hash(keys.free), now + 3);
    expect(reads).toBe(2);
    await cache.find(counted, hash(keys.builder), now + 4);
    expect(reads).toBe(3);
    expect(cache.counts).toEqual({ hit: 2, miss: 3, unknown: 0, unknown_cached: 0 });
  });

  it('evicts the least recently used, not the oldest', async () => {
    const cache = new KeyCache({ maxEntries: 2 });
    const now = Date.now();
    const other = hash(keys.free);
    await cache.find(counted, hash(keys.builder), now);
    await cache.find(counted, other, now);
    // builder used again: free is now the least recently used.
    await cache.find(counted, hash(keys.builder), now + 1);
    await cache.find(counted, unknownHash(1), now + 1);
    expect(cache.size).toBe(2);
    reads = 0;
    await cache.find(counted, hash(keys.builder), now + 2);
    await cache.find(counted, other, now + 2);
    expect(reads).toBe(0);
  });

  it('a flood of unknown keys neither evicts known keys nor reads Redis twice for one unknown key within the TTL', async () => {
    const cache = new KeyCache({ maxEntries: 10, maxUnknown: 100 });
    const now = Date.now();
    await cache.find(counted, hash(keys.builder), now);
    reads = 0;
    for (let i = 0; i < 300; i++) expect(await cache.find(counted, unknownHash(i), now)).toBeNull();
    expect(reads).toBe(300);
    // The last 100 unknown keys are remembered: asked again within the TTL, no read.
    for (let i = 200; i < 300; i++) await cache.find(counted, unknownHash(i), now + 500);
    expect(reads).toBe(300);
    // The known key stayed.
    await cache.find(counted, hash(keys.builder), now + 500);
    expect(reads).toBe(300);
    // Past the TTL an unknown key is looked up again (a key published since works then).
    await cache.find(counted, unknownHash(250), now + 1001);
    expect(reads).toBe(301);
    expect(cache.counts).toMatchObject({ hit: 1, unknown: 301, unknown_cached: 100 });
  });

  it('concurrent lookups of one key share one Redis read', async () => {
    const cache = new KeyCache();
    reads = 0;
    const now = Date.now();
    const found = await Promise.all(Array.from({ length: 20 }, () => cache.find(counted, hash(keys.builder), now)));
    expect(found.every((r) => r?.name === 'builder-key')).toBe(true);
    expect(reads).toBe(1);
    await Promise.all(Array.from({ length: 20 }, () => cache.find(counted, unknownHash(7777), now)));
    expect(reads).toBe(2);
  });
});

describe('the gateway on Redis with a warm key cache', () => {
  it('a key revoked while cached gets 401 key_revoked at its next call; lookups are on /metrics', async () => {
    const b = basics();
    const parsed = parseManifests(b.docs.map((doc, i) => ({ source: `t#${i}`, doc })));
    const compiled = compile(parsed.set, { pepper: PEPPER });
    const own = await RedisStore.connect({ url: redis.url, prefix: `${redis.prefix}-revoke` });
    await own.applyConfig(compiled.snapshot, compiled.keys);
    const { app, metrics } = await build({ config: { current: () => compiled.snapshot }, store: own, pepper: PEPPER, logLevel: 'silent', keyCacheSize: 100 });
    try {
      const url = await app.listen({ port: 0, host: '127.0.0.1' });
      const call = (): Promise<Response> =>
        fetch(`${url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${b.keys.builder}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'mock-mini', messages: [{ role: 'user', content: 'hi' }] }),
        });
      for (let i = 0; i < 3; i++) expect((await call()).status).toBe(200);
      await own.revoke(hash(b.keys.builder));
      const refused = await call();
      expect(refused.status).toBe(401);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('key_revoked');
      expect((await call()).status).toBe(401);
      const text = await metrics.registry.metrics();
      expect(metricSum(text, 'svc_gateway_key_lookups_total', { result: 'hit' })).toBeGreaterThanOrEqual(2);
      expect(metricSum(text, 'svc_gateway_key_lookups_total', { result: 'miss' })).toBeGreaterThanOrEqual(1);
      expect(metricSum(text, 'svc_gateway_key_cache_entries')).toBeLessThanOrEqual(100);
    } finally {
      await app.close();
      await own.close();
    }
  });
});
