// What a cache hit costs and what it is allowed (docs/billing.md: Response cache, Limits): the route's share of the
// original cost in exact nano-USD, the same admission as any call (revoked key 401, budget 402) before the cache, an
// RPM slot and no TPM, and the ledger equal to the usage events, concurrent identical calls included.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountKeys } from '../../gateway/contract/redis-keys.ts';
import { NANO_PER_USD } from '../../gateway/contract/money.ts';
import type { FakeUpstream } from '../fakes/upstream.ts';
import { apiKey } from '../helpers/manifests.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { cacheGateway, type CacheGateway } from './harness.ts';
import { cachedRoute, cacheSetup, echoUpstream, rawChat, upstreamCalls, type CacheSetup } from './setup.ts';

let redis: TestRedis;
let up: FakeUpstream;
let gw: CacheGateway;
let s: CacheSetup;
// A key of the same account whose expiry has passed.
const old = apiKey('old', 'acme', { expiresAt: '2020-01-01T00:00:00Z' });

beforeAll(async () => {
  redis = await startRedis('cache-billing');
  up = await echoUpstream();
  s = cacheSetup(
    [
      cachedRoute('free-hit', up, {}),
      cachedRoute('half-hit', up, { hitCostFraction: 0.5 }),
      cachedRoute('full-hit', up, { hitCostFraction: 1 }),
      cachedRoute('odd-hit', up, { hitCostFraction: 0.333333 }),
    ],
    { trialCreditUsd: 100 },
    { limits: { rpm: 1000, tpm: 1_000_000 } },
  );
  gw = await cacheGateway(redis, [...s.docs, ...old.docs]);
});

afterAll(async () => {
  await gw?.close();
  await up?.close();
  await redis?.stop();
});

const body = (model: string, text: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  model,
  temperature: 0,
  max_tokens: 50,
  messages: [{ role: 'user', content: text }],
  ...extra,
});

async function ledgerMatchesEvents(account: string): Promise<void> {
  const events = await gw.events(account);
  const ledger = await gw.store.ledger(account);
  expect(ledger.spentNano).toBe(events.reduce((sum, e) => sum + e.costNano, 0));
  expect(ledger.feeNano).toBe(events.reduce((sum, e) => sum + e.feeNano, 0));
  expect(ledger.heldNano).toBe(0);
  expect(ledger.openHolds).toBe(0);
}

describe('hit cost', () => {
  it.each([
    ['free-hit', 0],
    ['half-hit', 500_000],
    ['full-hit', 1_000_000],
    ['odd-hit', 333_333],
  ])('%s charges floor(original x fraction) in nano-USD and records what it saved', async (model, ppm) => {
    // A prompt of 45 characters: 12 input tokens at 1040 and 5 output at 2080 nano-USD = 22 880 nano-USD.
    const text = `cost check for ${model} `.padEnd(45, 'x');
    const miss = await rawChat(gw.url, s.keys.a1, body(model, text));
    await gw.idle();
    const hit = await rawChat(gw.url, s.keys.a1, body(model, text));
    expect([miss.headers.get('x-svc-cache'), hit.headers.get('x-svc-cache')]).toEqual(['miss', 'hit']);
    expect(hit.text).toBe(miss.text);
    const events = (await gw.events('acme')).filter((e) => e.requestedModel === model);
    const m = events.find((e) => e.cache === 'miss');
    const h = events.find((e) => e.cache === 'hit');
    expect(m?.costNano).toBe(12 * 1040 + 5 * 2080);
    const expected = Math.floor((22_880 * ppm) / 1_000_000);
    expect(h?.costNano).toBe(expected);
    expect(h?.cacheSavedNano).toBe(22_880 - expected);
    expect(h).toMatchObject({ inputTokens: 12, outputTokens: 5 });
    await ledgerMatchesEvents('acme');
  });
});

describe('GET /v1/me', () => {
  it("shows the key's hits this month and what they saved, equal to its usage events", async () => {
    const text = 'me check';
    await rawChat(gw.url, s.keys.a1, body('half-hit', text));
    await gw.idle();
    await rawChat(gw.url, s.keys.a1, body('half-hit', text));
    const events = (await gw.events('acme')).filter((e) => e.apiKey === 'a1');
    const hits = events.filter((e) => e.cache === 'hit');
    const saved = hits.reduce((sum, e) => sum + (e.cacheSavedNano ?? 0), 0);
    const res = await fetch(`${gw.url}/v1/me`, { headers: { authorization: `Bearer ${s.keys.a1}` } });
    const me = (await res.json()) as Record<string, unknown>;
    expect(hits.length).toBeGreaterThan(0);
    expect(me).toMatchObject({ month_cache_hits: hits.length, month_cache_saved_usd: saved / NANO_PER_USD });
    expect(me.month_spend_usd).toBe(events.reduce((sum, e) => sum + e.costNano, 0) / NANO_PER_USD);
  });
});

describe('limits before the cache', () => {
  it('answers 401 to a revoked key on a cached body', async () => {
    const text = 'revoked key check';
    expect((await rawChat(gw.url, s.keys.a2, body('free-hit', text))).status).toBe(200);
    await gw.idle();
    expect((await rawChat(gw.url, s.keys.a2, body('free-hit', text))).headers.get('x-svc-cache')).toBe('hit');
    await gw.revoke(s.keys.a2);
    const after = await rawChat(gw.url, s.keys.a2, body('free-hit', text));
    expect(after.status).toBe(401);
    expect(JSON.parse(after.text)).toMatchObject({ error: { code: 'key_revoked' } });
    expect(after.headers.get('x-svc-cache')).toBeNull();
    // The other key of the account still gets the entry.
    expect((await rawChat(gw.url, s.keys.a1, body('free-hit', text))).headers.get('x-svc-cache')).toBe('hit');
  });

  it('answers 401 key_expired to an expired key of the account on a cached body', async () => {
    const text = 'expired key check';
    await rawChat(gw.url, s.keys.a1, body('free-hit', text));
    await gw.idle();
    expect((await rawChat(gw.url, s.keys.a1, body('free-hit', text))).headers.get('x-svc-cache')).toBe('hit');
    const r = await rawChat(gw.url, old.key, body('free-hit', text));
    expect(r.status).toBe(401);
    expect(JSON.parse(r.text)).toMatchObject({ error: { code: 'key_expired' } });
  });

  it('takes an RPM slot and no TPM', async () => {
    const text = 'window check';
    await rawChat(gw.url, s.keys.a1, body('free-hit', text));
    await gw.idle();
    const keyName = 'a1';
    const calls = `${accountKeys(redis.prefix, 'acme').acct.replace(/:acct$/, '')}:tpm:${keyName}`;
    const tpmn = `${accountKeys(redis.prefix, 'acme').acct.replace(/:acct$/, '')}:tpmn:${keyName}`;
    const before = { rpm: await redis.client.zcard(calls), tpm: Number(await redis.client.hget(tpmn, '_sum')) };
    for (let i = 0; i < 3; i++) expect((await rawChat(gw.url, s.keys.a1, body('free-hit', text))).headers.get('x-svc-cache')).toBe('hit');
    await gw.idle();
    const after = { rpm: await redis.client.zcard(calls), tpm: Number(await redis.client.hget(tpmn, '_sum')) };
    expect(after.rpm).toBe(before.rpm + 3);
    expect(after.tpm).toBe(before.tpm);
  });

  it('concurrent identical calls: each miss goes upstream and is billed once, hits are billed as hits; ledger == events', async () => {
    const text = 'concurrent identical';
    const before = (await gw.events('acme')).length;
    const results = await Promise.all(Array.from({ length: 12 }, () => rawChat(gw.url, s.keys.a1, body('half-hit', text))));
    expect(results.every((r) => r.status === 200)).toBe(true);
    const events = (await gw.events('acme')).slice(before);
    expect(events).toHaveLength(12);
    const misses = events.filter((e) => e.cache === 'miss');
    const hits = events.filter((e) => e.cache === 'hit');
    expect(misses.length + hits.length).toBe(12);
    expect(misses.length).toBeGreaterThanOrEqual(1);
    expect(upstreamCalls(up, text)).toBe(misses.length);
    expect(results.filter((r) => r.headers.get('x-svc-cache') === 'miss')).toHaveLength(misses.length);
    for (const m of misses) expect(m.costNano).toBe(5 * 1040 + 5 * 2080);
    for (const h of hits) expect(h.costNano).toBe(Math.floor((5 * 1040 + 5 * 2080) / 2));
    await ledgerMatchesEvents('acme');
    // Once they are over, the next identical call is a hit.
    expect((await rawChat(gw.url, s.keys.a1, body('half-hit', text))).headers.get('x-svc-cache')).toBe('hit');
  });
});

describe('budget before the cache', () => {
  let r2: TestRedis;
  let gw2: CacheGateway;
  let s2: CacheSetup;
  const text = 'budget check';
  const sent = JSON.stringify(body('full-hit', text, { max_tokens: 1000 }));
  // The hold of this call: its bytes at the input price, 1000 output tokens at the output price.
  const hold = sent.length * 1040 + 1000 * 2080;
  const cost = 3 * 1040 + 5 * 2080;

  beforeAll(async () => {
    r2 = await startRedis('cache-budget');
    // A budget that admits the first call's hold, not a second one after its charge.
    s2 = cacheSetup([cachedRoute('full-hit', up, { hitCostFraction: 1 })], { trialCreditUsd: 100 }, { monthlyBudgetUsd: (hold + cost / 2) / NANO_PER_USD });
    gw2 = await cacheGateway(r2, s2.docs);
  });

  afterAll(async () => {
    await gw2?.close();
    await r2?.stop();
  });

  it('refuses a cached body with 402 once the budget cannot hold the call, as it would refuse a miss', async () => {
    const first = await fetch(`${gw2.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s2.keys.a1}`, 'content-type': 'application/json' },
      body: sent,
    });
    expect(first.status).toBe(200);
    expect(first.headers.get('x-svc-cache')).toBe('miss');
    await first.text();
    await gw2.idle();
    expect(await gw2.entries('acme')).toBe(1);
    const second = await fetch(`${gw2.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s2.keys.a1}`, 'content-type': 'application/json' },
      body: sent,
    });
    expect(second.status).toBe(402);
    expect(((await second.json()) as { error: { code: string } }).error.code).toBe('budget_exceeded');
    // Another key of the account (no budget) gets the hit.
    const other = await fetch(`${gw2.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s2.keys.a2}`, 'content-type': 'application/json' },
      body: sent,
    });
    expect(other.headers.get('x-svc-cache')).toBe('hit');
    await other.text();
  });
});
