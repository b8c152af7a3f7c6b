// The response cache through the official SDKs (docs/billing.md: Response cache): a repeated call is answered from
// the cache, whole or streamed with the same chunks, billed as a hit with the original tokens; never across
// accounts, but across the keys of one account.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeUpstream } from '../fakes/upstream.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { cacheGateway, metricValue, type CacheGateway } from './harness.ts';
import { anthropic, cachedRoute, cacheSetup, echoUpstream, openai, upstreamCalls, type CacheSetup } from './setup.ts';

let redis: TestRedis;
let up: FakeUpstream;
let gw: CacheGateway;
let s: CacheSetup;

beforeAll(async () => {
  redis = await startRedis('cache-sdk');
  up = await echoUpstream();
  s = cacheSetup([cachedRoute('cached', up, { ttlSeconds: 300 }), cachedRoute('uncached', up, undefined)]);
  gw = await cacheGateway(redis, s.docs);
});

afterAll(async () => {
  await gw?.close();
  await up?.close();
  await redis?.stop();
});

describe('OpenAI SDK', () => {
  it('answers a repeated call from the cache: same completion, x-svc-cache hit, x-svc-upstream cache, the original tokens, free', async () => {
    const client = openai(gw.url, s.keys.a1);
    const req = { model: 'cached', temperature: 0, messages: [{ role: 'user' as const, content: 'sdk plain one' }] };
    const first = await client.chat.completions.create(req).withResponse();
    expect(first.response.headers.get('x-svc-cache')).toBe('miss');
    expect(first.response.headers.get('x-svc-upstream')).toBe('cached-t');
    await gw.idle();
    const second = await client.chat.completions.create(req).withResponse();
    expect(second.response.headers.get('x-svc-cache')).toBe('hit');
    expect(second.response.headers.get('x-svc-upstream')).toBe('cache');
    expect(second.response.headers.get('x-svc-served-model')).toBe('cached');
    expect(second.data).toEqual(first.data);
    expect(second.data.choices[0]?.message.content).toBe('echo: sdk plain one');
    expect(upstreamCalls(up, 'sdk plain one')).toBe(1);
    const events = (await gw.events('acme')).filter((e) => e.requestedModel === 'cached' && e.inputTokens === 4);
    const [miss, hit] = events.slice(-2);
    expect(miss).toMatchObject({ cache: 'miss', upstream: 'cached-t', status: 200 });
    expect(hit).toMatchObject({ cache: 'hit', upstream: 'cache', servedModel: 'cached', status: 200, costNano: 0, feeNano: 0 });
    expect(hit?.inputTokens).toBe(miss?.inputTokens);
    expect(hit?.outputTokens).toBe(miss?.outputTokens);
    expect(miss?.costNano).toBeGreaterThan(0);
    expect(hit?.cacheSavedNano).toBe(miss?.costNano);
    expect(await metricValue(gw.metrics, 'svc_gateway_cache_requests_total', { model: 'cached', result: 'hit' })).toBeGreaterThanOrEqual(1);
  });

  it('answers a repeated stream from the cache as a stream with the same chunks, usage chunk included', async () => {
    const client = openai(gw.url, s.keys.a1);
    const req = {
      model: 'cached',
      temperature: 0,
      stream: true as const,
      stream_options: { include_usage: true },
      messages: [{ role: 'user' as const, content: 'sdk stream one' }],
    };
    const collect = async (): Promise<{ chunks: unknown[]; cache: string | null; upstream: string | null }> => {
      const { data, response } = await client.chat.completions.create(req).withResponse();
      const chunks: unknown[] = [];
      for await (const c of data) chunks.push(c);
      return { chunks, cache: response.headers.get('x-svc-cache'), upstream: response.headers.get('x-svc-upstream') };
    };
    const first = await collect();
    await gw.idle();
    const second = await collect();
    expect(first.cache).toBe('miss');
    expect(second).toMatchObject({ cache: 'hit', upstream: 'cache' });
    expect(second.chunks).toEqual(first.chunks);
    expect(second.chunks.length).toBeGreaterThan(2);
    expect(second.chunks.at(-1)).toMatchObject({ usage: { prompt_tokens: 4, completion_tokens: 5 } });
    expect(upstreamCalls(up, 'sdk stream one')).toBe(1);
    // Stream and non-stream are cached apart: the same body without stream is a miss.
    const plain = await client.chat.completions.create({ model: 'cached', temperature: 0, messages: req.messages }).withResponse();
    expect(plain.response.headers.get('x-svc-cache')).toBe('miss');
    const hit = (await gw.events('acme')).find((e) => e.cache === 'hit' && e.stream);
    expect(hit).toMatchObject({ inputTokens: 4, outputTokens: 5, costNano: 0 });
  });

  it('shares entries between the keys of one account, never between accounts', async () => {
    const req = { model: 'cached', temperature: 0, messages: [{ role: 'user' as const, content: 'sdk shared one' }] };
    const a1 = await openai(gw.url, s.keys.a1).chat.completions.create(req).withResponse();
    await gw.idle();
    const a2 = await openai(gw.url, s.keys.a2).chat.completions.create(req).withResponse();
    const b1 = await openai(gw.url, s.keys.b1).chat.completions.create(req).withResponse();
    await gw.idle();
    const b1again = await openai(gw.url, s.keys.b1).chat.completions.create(req).withResponse();
    expect([a1, a2, b1, b1again].map((r) => r.response.headers.get('x-svc-cache'))).toEqual(['miss', 'hit', 'miss', 'hit']);
    expect(upstreamCalls(up, 'sdk shared one')).toBe(2);
    const globex = await gw.events('globex');
    expect(globex.filter((e) => e.cache === 'hit')).toHaveLength(1);
    expect(globex.filter((e) => e.cache === 'miss')).toHaveLength(1);
  });

  it('says nothing of the cache on a route without one', async () => {
    const req = { model: 'uncached', temperature: 0, messages: [{ role: 'user' as const, content: 'sdk uncached one' }] };
    const client = openai(gw.url, s.keys.a1);
    await client.chat.completions.create(req);
    await gw.idle();
    const again = await client.chat.completions.create(req).withResponse();
    expect(again.response.headers.get('x-svc-cache')).toBeNull();
    expect(upstreamCalls(up, 'sdk uncached one')).toBe(2);
    const e = (await gw.events('acme')).filter((x) => x.requestedModel === 'uncached');
    expect(e.every((x) => x.cache === undefined)).toBe(true);
  });
});

describe('Anthropic SDK', () => {
  it('answers a repeated message from the cache', async () => {
    const client = anthropic(gw.url, s.keys.a1);
    const req = { model: 'cached', max_tokens: 64, temperature: 0, messages: [{ role: 'user' as const, content: 'anthropic plain one' }] };
    const first = await client.messages.create(req).withResponse();
    await gw.idle();
    const second = await client.messages.create(req).withResponse();
    expect(first.response.headers.get('x-svc-cache')).toBe('miss');
    expect(second.response.headers.get('x-svc-cache')).toBe('hit');
    expect(second.response.headers.get('x-svc-upstream')).toBe('cache');
    expect(second.data).toEqual(first.data);
    expect(second.data.content[0]).toMatchObject({ type: 'text', text: 'echo: anthropic plain one' });
    expect(second.data.usage).toMatchObject({ input_tokens: 5, output_tokens: 5 });
    expect(upstreamCalls(up, 'anthropic plain one')).toBe(1);
  });

  it('answers a repeated stream from the cache with the same events', async () => {
    const client = anthropic(gw.url, s.keys.a1);
    const req = { model: 'cached', max_tokens: 64, temperature: 0, messages: [{ role: 'user' as const, content: 'anthropic stream one' }] };
    const collect = async (): Promise<{ events: unknown[]; cache: string | null }> => {
      const { data, response } = await client.messages.create({ ...req, stream: true }).withResponse();
      const events: unknown[] = [];
      for await (const e of data) events.push(e);
      return { events, cache: response.headers.get('x-svc-cache') };
    };
    const first = await collect();
    await gw.idle();
    const second = await collect();
    expect([first.cache, second.cache]).toEqual(['miss', 'hit']);
    expect(second.events).toEqual(first.events);
    expect(second.events.map((e) => (e as { type: string }).type)).toContain('message_stop');
    expect(upstreamCalls(up, 'anthropic stream one')).toBe(1);
    // A different anthropic-beta header shapes the upstream request differently: another entry.
    const beta = await anthropic(gw.url, s.keys.a1)
      .messages.create(req, { headers: { 'anthropic-beta': 'some-beta-2025-01-01' } })
      .withResponse();
    expect(beta.response.headers.get('x-svc-cache')).toBe('miss');
  });
});
