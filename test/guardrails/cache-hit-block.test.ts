// An answer from the response cache goes through the response-stage guardrails as an upstream's answer does: when a
// Guardrail blocks it (here one that covers only the second key of the account, so the first key's call stored the
// answer unchecked), the caller gets 400 content_blocked naming the guardrail and the usage event says so too (400
// content_blocked with the block among its facts), never a 200 for an answer the caller never saw.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeUpstream } from '../fakes/upstream.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { cacheGateway, type CacheGateway } from '../cache/harness.ts';
import { cachedRoute, cacheSetup, echoUpstream, rawChat, upstreamCalls, type CacheSetup } from '../cache/setup.ts';

const AWS_KEY = 'AKIAZ7Q3XKQ4PLMNB2WE';

let redis: TestRedis;
let up: FakeUpstream;
let gw: CacheGateway;
let s: CacheSetup;

beforeAll(async () => {
  redis = await startRedis('guard-cache-hit');
  up = await echoUpstream();
  s = cacheSetup([cachedRoute('cached', up, { hitCostFraction: 0.5 })]);
  gw = await cacheGateway(redis, [
    ...s.docs,
    {
      apiVersion: 'gateway.svc.dev/v1alpha1',
      kind: 'Guardrail',
      metadata: { name: 'a2-no-secrets' },
      spec: { selector: { keys: ['a2'] }, stages: ['response'], checks: [{ detector: 'secrets', action: 'block' }] },
    },
  ]);
});

afterAll(async () => {
  await gw?.close();
  await up?.close();
  await redis?.stop();
});

describe('a cache hit a response guardrail blocks', () => {
  it('answers 400 content_blocked and records it so, for a JSON answer', async () => {
    const body = { model: 'cached', temperature: 0, max_tokens: 50, messages: [{ role: 'user', content: `keep ${AWS_KEY} safe` }] };
    const first = await rawChat(gw.url, s.keys.a1, body);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-svc-cache')).toBe('miss');
    await gw.idle();
    const second = await rawChat(gw.url, s.keys.a2, body);
    expect(second.headers.get('x-svc-cache')).toBe('hit');
    expect(upstreamCalls(up, `keep ${AWS_KEY} safe`)).toBe(1);
    expect(second.status).toBe(400);
    expect(JSON.parse(second.text)).toMatchObject({ error: { code: 'content_blocked' } });
    expect(second.text).toContain('a2-no-secrets');
    expect(second.text).not.toContain(AWS_KEY);
    const events = await gw.events('acme');
    const hit = events.find((e) => e.cache === 'hit' && e.apiKey === 'a2');
    expect(hit).toMatchObject({ status: 400, errorCode: 'content_blocked' });
    expect(hit?.guardrails).toEqual([{ guardrail: 'a2-no-secrets', check: 'secrets', action: 'block', stage: 'response', kind: 'aws-access-key', count: 1 }]);
    expect(JSON.stringify(hit)).not.toContain(AWS_KEY);
    const ledger = await gw.store.ledger('acme');
    expect(ledger.spentNano).toBe(events.reduce((sum, e) => sum + e.costNano, 0));
    expect(ledger.openHolds).toBe(0);
  });
});
