// The response cache's rules at their edges (docs/billing.md: Response cache): cache-control no-cache and no-store,
// sampling calls bypassed unless the route or the request says so, TTL expiry, maxEntryBytes at 0, 1 and its maximum
// and an answer above it, the account's byte budget, and a cache that fails without failing the call.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountKeys } from '../../gateway/contract/redis-keys.ts';
import { MAX_CACHE_ENTRY_BYTES } from '../../crds/schema/model-route.ts';
import { DEFAULT_ANTHROPIC_VERSION } from '../../gateway/providers/anthropic/index.ts';
import type { FakeUpstream } from '../fakes/upstream.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { route } from '../helpers/manifests.ts';
import { cacheGateway, metricValue, type CacheGateway } from './harness.ts';
import { cachedRoute, cacheSetup, echoUpstream, rawChat, upstreamCalls, type CacheSetup } from './setup.ts';

let redis: TestRedis;
let up: FakeUpstream;
let gw: CacheGateway;
let s: CacheSetup;

beforeAll(async () => {
  redis = await startRedis('cache-edges');
  up = await echoUpstream();
  s = cacheSetup([
    cachedRoute('cached', up, {}),
    cachedRoute('sampling', up, { allowSampling: true }),
    cachedRoute('short', up, { ttlSeconds: 1 }),
    cachedRoute('zero', up, { maxEntryBytes: 0 }),
    cachedRoute('one', up, { maxEntryBytes: 1 }),
    cachedRoute('max', up, { maxEntryBytes: MAX_CACHE_ENTRY_BYTES }),
    cachedRoute('small', up, { maxEntryBytes: 400 }),
    route('embed', [{ name: 'embed-t', provider: 'openai', baseUrl: up.baseUrl, upstreamModel: 'up-embed' }], { type: 'embeddings', cache: {} }),
  ]);
  gw = await cacheGateway(redis, s.docs);
});

afterAll(async () => {
  await gw?.close();
  await up?.close();
  await redis?.stop();
});

const body = (model: string, text: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  model,
  temperature: 0,
  messages: [{ role: 'user', content: text }],
  ...extra,
});

/** x-svc-cache of each call in turn (each one over, its answer stored or not, before the next). */
async function states(calls: Array<{ model: string; text: string; extra?: Record<string, unknown>; headers?: Record<string, string> }>): Promise<string[]> {
  const out: string[] = [];
  for (const c of calls) {
    const r = await rawChat(gw.url, s.keys.a1, body(c.model, c.text, c.extra), c.headers);
    expect(r.status).toBe(200);
    out.push(r.headers.get('x-svc-cache') ?? 'none');
    await gw.idle();
  }
  return out;
}

describe('per request', () => {
  it('cache-control: no-cache reads nothing but stores the new answer', async () => {
    const t = 'no-cache check';
    expect(
      await states([
        { model: 'cached', text: t },
        { model: 'cached', text: t, headers: { 'cache-control': 'no-cache' } },
        { model: 'cached', text: t },
      ]),
    ).toEqual(['miss', 'miss', 'hit']);
    expect(upstreamCalls(up, t)).toBe(2);
  });

  it('cache-control: max-age=0 and, without cache-control, pragma: no-cache read nothing, as no-cache', async () => {
    const t = 'max-age check';
    expect(
      await states([
        { model: 'cached', text: t },
        { model: 'cached', text: t, headers: { 'cache-control': 'max-age=0' } },
        { model: 'cached', text: t, headers: { 'cache-control': 'Max-Age = "0", private' } },
        { model: 'cached', text: t, headers: { pragma: 'no-cache' } },
        { model: 'cached', text: t, headers: { 'cache-control': 'max-age=3600', pragma: 'no-cache' } },
        { model: 'cached', text: t },
      ]),
    ).toEqual(['miss', 'miss', 'miss', 'miss', 'hit', 'hit']);
    expect(upstreamCalls(up, t)).toBe(4);
  });

  it('a Messages call without anthropic-version and one with the version the gateway sends for it are one entry', async () => {
    const call = async (headers: Record<string, string>): Promise<string | null> => {
      const res = await fetch(`${gw.url}/anthropic/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': s.keys.a1, 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ model: 'cached', max_tokens: 64, temperature: 0, messages: [{ role: 'user', content: 'version check' }] }),
      });
      expect(res.status).toBe(200);
      await res.text();
      await gw.idle();
      return res.headers.get('x-svc-cache');
    };
    expect([await call({}), await call({ 'anthropic-version': DEFAULT_ANTHROPIC_VERSION }), await call({ 'anthropic-version': '2099-01-01' })]).toEqual([
      'miss',
      'hit',
      'miss',
    ]);
  });

  it('cache-control: no-store neither reads nor stores', async () => {
    const t = 'no-store check';
    expect(
      await states([
        { model: 'cached', text: t, headers: { 'cache-control': 'no-store' } },
        { model: 'cached', text: t },
        { model: 'cached', text: t, headers: { 'cache-control': 'max-age=0, No-Store' } },
      ]),
    ).toEqual(['bypass', 'miss', 'bypass']);
    expect(upstreamCalls(up, t)).toBe(3);
    const e = (await gw.events('acme')).filter((x) => x.cache === 'bypass');
    expect(e.length).toBeGreaterThanOrEqual(2);
  });

  it('does not cache a sampling call (temperature above 0 or absent, n above 1) unless x-svc-cache: force', async () => {
    const t = 'sampling check';
    expect(
      await states([
        { model: 'cached', text: t, extra: { temperature: 0.7 } },
        { model: 'cached', text: t, extra: { temperature: 0.7 } },
        { model: 'cached', text: t, extra: { temperature: undefined } },
        { model: 'cached', text: t, extra: { n: 2 } },
        { model: 'cached', text: t, extra: { temperature: 0.7 }, headers: { 'x-svc-cache': 'force' } },
        { model: 'cached', text: t, extra: { temperature: 0.7 }, headers: { 'x-svc-cache': 'force' } },
      ]),
    ).toEqual(['bypass', 'bypass', 'bypass', 'bypass', 'miss', 'hit']);
    // The temperature is part of the key: 0.8 is another entry.
    expect(await states([{ model: 'cached', text: t, extra: { temperature: 0.8 }, headers: { 'x-svc-cache': 'force' } }])).toEqual(['miss']);
  });

  it('caches sampling calls on a route with allowSampling', async () => {
    const t = 'allow sampling check';
    expect(
      await states([
        { model: 'sampling', text: t, extra: { temperature: 1 } },
        { model: 'sampling', text: t, extra: { temperature: 1 } },
      ]),
    ).toEqual(['miss', 'hit']);
  });

  it('caches embeddings (they never sample)', async () => {
    const call = async (): Promise<string | null> => {
      const res = await fetch(`${gw.url}/v1/embeddings`, {
        method: 'POST',
        headers: { authorization: `Bearer ${s.keys.a1}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'embed', input: 'embed me' }),
      });
      expect(res.status).toBe(200);
      await res.text();
      await gw.idle();
      return res.headers.get('x-svc-cache');
    };
    expect([await call(), await call()]).toEqual(['miss', 'hit']);
  });

  it('keys on every sampling parameter and the body, not on key order', async () => {
    const t = 'key order check';
    const a = { model: 'cached', temperature: 0, max_tokens: 20, messages: [{ role: 'user', content: t }] };
    const b = { messages: [{ content: t, role: 'user' }], max_tokens: 20, temperature: 0, model: 'cached' };
    expect((await rawChat(gw.url, s.keys.a1, a)).headers.get('x-svc-cache')).toBe('miss');
    await gw.idle();
    expect((await rawChat(gw.url, s.keys.a1, b)).headers.get('x-svc-cache')).toBe('hit');
    expect((await rawChat(gw.url, s.keys.a1, { ...b, max_tokens: 21 })).headers.get('x-svc-cache')).toBe('miss');
    expect((await rawChat(gw.url, s.keys.a1, { ...b, top_p: 0.5 })).headers.get('x-svc-cache')).toBe('miss');
    expect((await rawChat(gw.url, s.keys.a1, { ...b, seed: 7 })).headers.get('x-svc-cache')).toBe('miss');
  });
});

describe('bounds', () => {
  it('serves an entry until its TTL, then calls upstream again', async () => {
    const t = 'ttl check';
    expect(
      await states([
        { model: 'short', text: t },
        { model: 'short', text: t },
      ]),
    ).toEqual(['miss', 'hit']);
    // Past the 1 s TTL (a wait, not a timed assertion).
    await new Promise((r) => setTimeout(r, 1100));
    expect(await states([{ model: 'short', text: t }])).toEqual(['miss']);
    expect(upstreamCalls(up, t)).toBe(2);
  });

  it('maxEntryBytes 0 and 1 store nothing; the maximum stores; an answer above the limit is served and not stored', async () => {
    const t = 'size check';
    expect(
      await states([
        { model: 'zero', text: t },
        { model: 'zero', text: t },
      ]),
    ).toEqual(['miss', 'miss']);
    expect(
      await states([
        { model: 'one', text: t },
        { model: 'one', text: t },
      ]),
    ).toEqual(['miss', 'miss']);
    expect(
      await states([
        { model: 'max', text: t },
        { model: 'max', text: t },
      ]),
    ).toEqual(['miss', 'hit']);
    // The answer echoes the prompt: about 280 bytes for a short one, over 400 for a long one.
    expect(
      await states([
        { model: 'small', text: t },
        { model: 'small', text: t },
      ]),
    ).toEqual(['miss', 'hit']);
    const long = 'size check '.repeat(20);
    const big = await rawChat(gw.url, s.keys.a1, body('small', long));
    expect(big.text.length).toBeGreaterThan(400);
    await gw.idle();
    expect(await states([{ model: 'small', text: long }])).toEqual(['miss']);
    expect(await metricValue(gw.metrics, 'svc_gateway_cache_oversize_total', { model: 'small' })).toBe(2);
    expect(await metricValue(gw.metrics, 'svc_gateway_cache_oversize_total', { model: 'one' })).toBe(2);
  });

  it("evicts the account's soonest-expiring entries to stay within its byte budget", async () => {
    const r2 = await startRedis('cache-budget-bytes');
    const gw2 = await cacheGateway(r2, s.docs, { cacheAccountBytes: 1500 });
    try {
      const call = async (text: string): Promise<string | null> => {
        const r = await rawChat(gw2.url, s.keys.a1, body('cached', text));
        await gw2.idle();
        return r.headers.get('x-svc-cache');
      };
      for (const t of ['budget a', 'budget b', 'budget c', 'budget d']) expect(await call(t)).toBe('miss');
      const sizes = accountKeys(r2.prefix, 'acme').cachesz;
      expect(Number(await r2.client.hget(sizes, '_sum'))).toBeLessThanOrEqual(1500);
      expect(await gw2.entries('acme')).toBeLessThan(4);
      expect(await call('budget d')).toBe('hit');
      expect(await call('budget a')).toBe('miss');
      expect(await metricValue(gw2.metrics, 'svc_gateway_cache_evictions_total', { model: 'cached' })).toBeGreaterThan(0);
    } finally {
      await gw2.close();
      await r2.stop();
    }
  });
});

describe('a failing cache', () => {
  it('serves calls uncached when the cache keys cannot be read or written, and counts the failures', async () => {
    const k = accountKeys(redis.prefix, 'globex');
    // Wrong types: every cache read and write of the account fails in Redis (WRONGTYPE), admission does not.
    await redis.client.set(k.cachex, 'not a zset');
    await redis.client.set(k.cache, 'not a hash');
    const before = await metricValue(gw.metrics, 'svc_gateway_cache_errors_total', { model: 'cached' });
    const t = 'failing cache check';
    for (let i = 0; i < 2; i++) {
      const r = await rawChat(gw.url, s.keys.b1, body('cached', t));
      expect(r.status).toBe(200);
      expect(JSON.parse(r.text)).toMatchObject({ choices: [{ message: { content: `echo: ${t}` } }] });
      await gw.idle();
    }
    expect(upstreamCalls(up, t)).toBe(2);
    expect(await metricValue(gw.metrics, 'svc_gateway_cache_errors_total', { model: 'cached' })).toBeGreaterThanOrEqual(before + 3);
    await redis.client.del(k.cachex, k.cache);
  });

  it('treats an entry it cannot read as a miss', async () => {
    const t = 'corrupt entry check';
    await states([{ model: 'cached', text: t }]);
    const k = accountKeys(redis.prefix, 'acme');
    const shas = await redis.client.hkeys(k.cache);
    for (const sha of shas) await redis.client.hset(k.cache, sha, '{"v":99}');
    expect(
      await states([
        { model: 'cached', text: t },
        { model: 'cached', text: t },
      ]),
    ).toEqual(['miss', 'hit']);
  });
});
