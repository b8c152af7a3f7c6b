// A request that bounds its output in two fields (Chat's max_completion_tokens and max_tokens, or a field of another
// dialect sent along) to an upstream that honours the other one: the upstream must receive the bound the gateway held,
// in whichever field it reads, so it generates no more than the hold and the key pays what the upstream reports
// (nothing clamped, so the operator pays nothing the key did not).
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UsageEvent } from '../../gateway/usage/event.ts';
import { startUsageFake, type UsageFake } from '../fakes/usage-upstream.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { account, apiKey, plan, route } from '../helpers/manifests.ts';
import { metricSum } from '../helpers/prom.ts';
import { until } from '../helpers/until.ts';

const PRICING = { inputPerMTokUsd: 1, outputPerMTokUsd: 2 };

let fake: UsageFake;
let gw: TestGateway;
let key: string;

beforeAll(async () => {
  fake = await startUsageFake();
  const k = apiKey('bounds', 'a-bounds');
  key = k.key;
  gw = await startGateway([
    plan('builder', { tier: 2, anthropicEndpoint: true }),
    account('a-bounds', 'builder', { trialCreditUsd: 10 }),
    ...k.docs,
    route('gpt-x', [{ name: 'fake-chat', provider: 'openai', baseUrl: fake.baseUrl, upstreamModel: 'up-gpt' }], { pricing: PRICING }),
    route('gpt-r', [{ name: 'fake-responses', provider: 'openai', baseUrl: fake.baseUrl, upstreamModel: 'up-gpt', responsesApi: true }], {
      pricing: PRICING,
    }),
    route('claude-x', [{ name: 'fake-claude', provider: 'anthropic', baseUrl: fake.url, upstreamModel: 'up-claude' }], { pricing: PRICING }),
  ]);
}, 30_000);

afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

const openai = (): OpenAI => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });

/** A call with a field the official SDKs' types do not have; it must be served. */
async function post(path: string, body: object): Promise<void> {
  const r = await fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify(body),
  });
  expect(r.status, await r.text()).toBe(200);
}

/** The usage event of the next call, once it settled, and the body the upstream received. */
async function oneCall(fields: readonly string[], call: () => Promise<unknown>): Promise<{ e: UsageEvent; sent: Record<string, unknown> }> {
  const calls = fake.calls.length;
  const events = gw.sink.events.length;
  fake.boundFields = fields;
  try {
    await call();
  } finally {
    fake.boundFields = ['max_completion_tokens', 'max_tokens', 'max_output_tokens'];
  }
  await until(async () => gw.sink.events.length > events && (await gw.store.ledger('a-bounds')).openHolds === 0, 10_000, 'the call settled');
  const e = gw.sink.events[events];
  const sent = fake.calls[calls]?.body;
  if (!e || !sent) throw new Error('no event or no upstream call');
  return { e, sent };
}

describe('two output bounds in one request', () => {
  it('Chat max_completion_tokens 1 with max_tokens 1000 to an upstream that reads max_tokens: it gets 1, the key pays what it reports', async () => {
    const clampedBefore = metricSum(await gw.metrics.registry.metrics(), 'svc_gateway_usage_clamped_total');
    const messages = [{ role: 'user' as const, content: 'hi' }];
    const plain = await oneCall(['max_tokens'], () =>
      openai().chat.completions.create({ model: 'gpt-x', messages, max_completion_tokens: 1, max_tokens: 1000 }),
    );
    const streamed = await oneCall(['max_tokens'], async () => {
      const s = await openai().chat.completions.create({ model: 'gpt-x', messages, max_completion_tokens: 1, max_tokens: 1000, stream: true });
      for await (const _c of s) {
        /* drain */
      }
    });
    for (const { e, sent } of [plain, streamed]) {
      // Before the fix: max_tokens 1000 went upstream, which billed 1000 tokens; the key was charged 1 (clamped).
      expect(sent).toMatchObject({ max_completion_tokens: 1, max_tokens: 1 });
      expect(e).toMatchObject({ status: 200, outputTokens: 1, usageClamped: false, usageEstimated: false });
    }
    expect(metricSum(await gw.metrics.registry.metrics(), 'svc_gateway_usage_clamped_total')).toBe(clampedBefore);
  });

  it('Chat max_tokens 1000 alone to an upstream that reads max_tokens: it gets 1000 and pays 1000 (the bound is not lowered)', async () => {
    const { e, sent } = await oneCall(['max_tokens'], () =>
      openai().chat.completions.create({ model: 'gpt-x', messages: [{ role: 'user', content: 'hi' }], max_tokens: 1000 }),
    );
    expect(sent.max_tokens).toBe(1000);
    expect(sent).not.toHaveProperty('max_completion_tokens');
    expect(e).toMatchObject({ outputTokens: 1000, usageClamped: false });
  });

  it('Responses max_output_tokens 1 with a max_tokens 1000 sent along: an upstream that reads max_tokens gets 1', async () => {
    const { e, sent } = await oneCall(['max_tokens'], () => post('/v1/responses', { model: 'gpt-r', input: 'hi', max_output_tokens: 1, max_tokens: 1000 }));
    expect(sent).toMatchObject({ max_output_tokens: 1, max_tokens: 1 });
    expect(e).toMatchObject({ outputTokens: 1, usageClamped: false });
  });

  it('Messages max_tokens 1 with a max_completion_tokens 1000 sent along: an upstream that reads the latter gets 1', async () => {
    const { e, sent } = await oneCall(['max_completion_tokens', 'max_tokens'], () =>
      post('/anthropic/v1/messages', { model: 'claude-x', max_tokens: 1, max_completion_tokens: 1000, messages: [{ role: 'user', content: 'hi' }] }),
    );
    expect(sent).toMatchObject({ max_tokens: 1, max_completion_tokens: 1 });
    expect(e).toMatchObject({ outputTokens: 1, usageClamped: false });
  });
});
