// Issue 18, item 1: calls that cost nothing (count_tokens, an upstream 5xx, a client that went away) never break
// their account. On Redis, a zero amount once made the settle script fail halfway: the hold stayed, and once it was
// older than the hold TTL every admission of the account failed (503 store_unavailable) for good.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic-upstream.ts';
import { startFakeUpstream, type FakeUpstream } from '../fakes/upstream.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { sleep, startAbuseGateway, within, type AbuseGateway } from './harness.ts';
import { abuseConfig, ACCOUNT } from './manifests.ts';

const HOLD_TTL_MS = 1000;

let redis: TestRedis;
let openai: FakeUpstream;
let anthropic: FakeAnthropic;

beforeAll(async () => {
  [redis, openai, anthropic] = await Promise.all([startRedis('abuse-zero'), startFakeUpstream('zero-openai'), startFakeAnthropic('zero-anthropic')]);
  openai.fallback = (call) => {
    if (call.body.model === 'broken-up') return { kind: 'status', status: 500 };
    if (call.body.model === 'slow-up') return { kind: 'reply', delayMs: 3000 };
    return { kind: 'reply' };
  };
});

afterAll(async () => {
  await Promise.all([openai?.close(), anthropic?.close()]);
  await redis?.stop();
});

// Each call its own prompt: the routes cache answers (abuse manifests), and this test needs two charged calls.
let asked = 0;
const chatBody = (model: string): string => JSON.stringify({ model, messages: [{ role: 'user', content: `Hello ${++asked}` }], max_tokens: 20 });

async function post(gw: AbuseGateway, key: string, path: string, body: string, signal?: AbortSignal): Promise<number> {
  const res = await fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body,
    signal,
  });
  await res.text();
  return res.status;
}

describe.each(['redis', 'memory'] as const)('zero-cost calls, then the hold TTL, then a normal call (%s store)', (kind) => {
  let gw: AbuseGateway;
  let key: string;

  beforeAll(async () => {
    const cfg = abuseConfig({ openai: openai.baseUrl, anthropic: anthropic.baseUrl });
    key = cfg.key;
    const r = kind === 'redis' ? { ...redis, prefix: `${redis.prefix}-zc` } : undefined;
    gw = await startAbuseGateway(cfg.docs, { redis: r, holdTtlMs: HOLD_TTL_MS });
  });

  afterAll(async () => {
    await gw?.close();
  });

  it('answers 200 after the zero-cost holds would have expired, with no hold left and one event per call', async () => {
    // 1. count_tokens: free, a hold of 0.
    const counted = await post(
      gw,
      key,
      '/anthropic/v1/messages/count_tokens',
      JSON.stringify({ model: 'chat-a', messages: [{ role: 'user', content: 'How many tokens?' }] }),
    );
    expect(counted, 'count_tokens').toBe(200);
    // 2. The upstream answers 500: nothing served, nothing charged.
    expect(await post(gw, key, '/v1/chat/completions', chatBody('broken')), 'upstream 500').toBe(502);
    // 3. The client goes away while the upstream has not answered yet.
    const ctrl = new AbortController();
    const aborted = post(gw, key, '/v1/chat/completions', chatBody('slow'), ctrl.signal).catch(() => 'aborted');
    await sleep(300);
    ctrl.abort();
    expect(await aborted).toBe('aborted');
    // Their events are awaited (bounded), not asserted yet: the call after the TTL is what must not break.
    await within(3000, async () => (await gw.events(ACCOUNT)).length >= 3);
    // Past the hold TTL: an unsettled hold would now be reclaimed inside the next admission.
    await sleep(HOLD_TTL_MS + 600);
    const after = await post(gw, key, '/v1/chat/completions', chatBody('chat-o'));
    const again = await post(gw, key, '/v1/chat/completions', chatBody('chat-o'));
    expect([after, again], 'normal calls after the hold TTL').toEqual([200, 200]);

    await within(3000, async () => (await gw.events(ACCOUNT)).length >= 5);
    const ledger = await gw.ledger(ACCOUNT);
    expect({ openHolds: ledger.openHolds, heldNano: ledger.heldNano }).toEqual({ openHolds: 0, heldNano: 0 });
    const events = await gw.events(ACCOUNT);
    const seen = events.map((e) => `${e.endpoint} ${e.status}${e.costNano === 0 ? ' free' : ''}`);
    expect(seen.sort()).toEqual([
      'chat.completions 200',
      'chat.completions 200',
      'chat.completions 499 free',
      'chat.completions 502 free',
      'count_tokens 200 free',
    ]);
    expect(new Set(events.map((e) => e.eventId)).size).toBe(events.length);
    // Spent == the sum of the events' costs (no event lost, none double counted).
    expect(ledger.spentNano).toBe(events.reduce((s, e) => s + e.costNano, 0));
  });
});
