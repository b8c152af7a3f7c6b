import { describe, expect, it } from 'vitest';
import type { CompiledModel } from '../contract/snapshot.ts';
import type { Translation } from '../translate/types.ts';
import { cacheKey, cachePlan, decodeEntry, encodeEntry, hitCost, samples, type CacheEntry } from './cache.ts';
import type { CallSpec } from './call-spec.ts';

const model: CompiledModel = {
  id: 'm',
  type: 'chat',
  minTier: 0,
  inputNanoPerToken: 1040,
  outputNanoPerToken: 2080,
  maxOutputTokens: 4096,
  targets: [
    {
      name: 't',
      provider: 'mock',
      baseUrl: null,
      upstreamModel: 'up-m',
      credential: { kind: 'none' },
      weight: 1,
      timeouts: { connectMs: 1, firstByteMs: 1, idleMs: 1, totalMs: 1 },
      mock: null,
    },
  ],
  fallbacks: [],
  cache: { ttlSeconds: 60, maxEntryBytes: 1000, hitCostPpm: 500_000, allowSampling: false },
};

function spec(body: Record<string, unknown>, over: Partial<CallSpec> = {}): CallSpec {
  return {
    dialect: 'openai',
    endpoint: 'chat.completions',
    modelType: 'chat',
    modelId: 'm',
    stream: body.stream === true,
    taskType: null,
    maxTokens: undefined,
    inputBytes: 10,
    translationFor: () => ({}) as Translation,
    cacheBody: body,
    ...over,
  };
}

const msgs = [{ role: 'user', content: 'hi' }];

describe('hitCost', () => {
  it('is floor(original x ppm / 1e6), exact up to 2^53, and saved = original - cost', () => {
    expect(hitCost(22_880, 0)).toEqual({ costNano: 0, savedNano: 22_880 });
    expect(hitCost(22_880, 1_000_000)).toEqual({ costNano: 22_880, savedNano: 0 });
    expect(hitCost(3, 500_000)).toEqual({ costNano: 1, savedNano: 2 });
    expect(hitCost(1, 999_999)).toEqual({ costNano: 0, savedNano: 1 });
    const max = Number.MAX_SAFE_INTEGER;
    expect(hitCost(max, 999_999).costNano).toBe(Number((BigInt(max) * 999_999n) / 1_000_000n));
    expect(hitCost(max, 999_999).costNano + hitCost(max, 999_999).savedNano).toBe(max);
  });
});

describe('cacheKey', () => {
  it('ignores key order, and changes with the account, the body, stream and the upstream model', () => {
    const a = cacheKey(spec({ model: 'm', temperature: 0, messages: msgs }), model, 'acme', { model: 'm', temperature: 0, messages: msgs });
    const b = cacheKey(spec({}), model, 'acme', { messages: [{ content: 'hi', role: 'user' }], temperature: 0, model: 'alias' });
    expect(b).toBe(a);
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(cacheKey(spec({}), model, 'other', { model: 'm', temperature: 0, messages: msgs })).not.toBe(a);
    expect(cacheKey(spec({}), model, 'acme', { model: 'm', temperature: 0, messages: msgs, seed: 1 })).not.toBe(a);
    expect(cacheKey(spec({}, { stream: true }), model, 'acme', { model: 'm', temperature: 0, messages: msgs })).not.toBe(a);
    const moved = { ...model, targets: model.targets.map((t) => ({ ...t, upstreamModel: 'up-m2' })) };
    expect(cacheKey(spec({}), moved, 'acme', { model: 'm', temperature: 0, messages: msgs })).not.toBe(a);
    expect(cacheKey(spec({}, { cacheVary: { beta: 'x' } }), model, 'acme', { model: 'm', temperature: 0, messages: msgs })).not.toBe(a);
  });
});

describe('cachePlan', () => {
  const body = { model: 'm', temperature: 0, messages: msgs };
  it('is null on a route without a cache', () => {
    expect(cachePlan(spec(body), { ...model, cache: undefined }, 'acme', {})).toBeNull();
  });

  it('honours no-cache, no-store (any case, among other directives) and x-svc-cache: force', () => {
    expect(cachePlan(spec(body), model, 'acme', {})).toMatchObject({ state: 'lookup', read: true, write: true, ttlMs: 60_000, hitCostPpm: 500_000 });
    expect(cachePlan(spec(body), model, 'acme', { 'cache-control': 'No-Cache' })).toMatchObject({ state: 'lookup', read: false, write: true });
    expect(cachePlan(spec(body), model, 'acme', { 'cache-control': 'max-age=0, no-store' })).toMatchObject({ state: 'bypass', why: 'no-store' });
    const sampled = { ...body, temperature: 0.2 };
    expect(cachePlan(spec(sampled), model, 'acme', {})).toMatchObject({ state: 'bypass', why: 'sampling' });
    expect(cachePlan(spec(sampled), model, 'acme', { 'x-svc-cache': 'force' })).toMatchObject({ state: 'lookup' });
    expect(cachePlan(spec(sampled), model, 'acme', { 'x-svc-cache': 'force', 'cache-control': 'no-store' })).toMatchObject({ state: 'bypass' });
    expect(cachePlan(spec(body, { cacheBody: undefined }), model, 'acme', {})).toMatchObject({ state: 'bypass', why: 'not-cacheable' });
  });

  it('counts no temperature, a positive one and n > 1 as sampling; embeddings never', () => {
    expect(samples(spec({}), { messages: msgs })).toBe(true);
    expect(samples(spec({}), { temperature: 0 })).toBe(false);
    expect(samples(spec({}, { choices: 2 }), { temperature: 0 })).toBe(true);
    expect(samples(spec({}, { modelType: 'embeddings' }), { input: 'x' })).toBe(false);
  });
});

describe('entries', () => {
  it('read back what was written, and refuse anything else (a miss)', () => {
    const e: CacheEntry = {
      v: 1,
      kind: 'stream',
      body: 'data: {}\n\n',
      servedModel: 'm',
      usage: { inputTokens: 1, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0 },
      costNano: 5,
    };
    expect(decodeEntry(encodeEntry(e))).toEqual(e);
    for (const bad of ['', 'nope', '{"v":2}', JSON.stringify({ ...e, costNano: -1 }), JSON.stringify({ ...e, usage: { inputTokens: 1.5 } })]) {
      expect(decodeEntry(bad)).toBeNull();
    }
  });
});
