// Issue 21 item 6, first point: a call that can never fit its key's per-minute token budget is a 400 in the
// caller's dialect that says which limit and by how much, with no retry-after (SDKs retry 429 by themselves, and a
// client honouring retry-after would wait and fail again forever). It costs no quota and reaches no upstream; a
// call that fits the limit but not the minute's remainder still gets 429 with retry-after.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../fakes/upstream.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { account, apiKey, plan, route } from '../helpers/manifests.ts';
import { until } from '../helpers/until.ts';

const TPM = 2_000_000;
const k = apiKey('k', 'acme', { limits: { tpm: TPM } });
let up: FakeUpstream;
let gw: TestGateway;

beforeAll(async () => {
  up = await startFakeUpstream('never-fit');
  gw = await startGateway(
    [
      plan('builder', { tier: 2, anthropicEndpoint: true }),
      account('acme', 'builder', { trialCreditUsd: 1_000_000 }),
      ...k.docs,
      route('gpt-x', [{ name: 'up', provider: 'openai', baseUrl: up.baseUrl }]),
    ],
    { bodyLimit: 10 * 1024 * 1024 },
  );
});

afterAll(async () => {
  await gw?.close();
  await up?.close();
});

async function post(path: string, body: object): Promise<{ status: number; retryAfter: string | null; body: Record<string, unknown> }> {
  const r = await fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${k.key}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify(body),
  });
  return { status: r.status, retryAfter: r.headers.get('retry-after'), body: (await r.json()) as Record<string, unknown> };
}

const messages = [{ role: 'user', content: 'hi' }];
const CASES: Array<[string, string, object]> = [
  ['chat max_tokens 1e9', '/v1/chat/completions', { model: 'gpt-x', messages, max_tokens: 1_000_000_000 }],
  ['chat max_completion_tokens 1e9', '/v1/chat/completions', { model: 'gpt-x', messages, max_completion_tokens: 1_000_000_000 }],
  ['chat max_tokens 20000 × n 128', '/v1/chat/completions', { model: 'gpt-x', messages, max_tokens: 20_000, n: 128 }],
  ['chat, a 3 MB text', '/v1/chat/completions', { model: 'gpt-x', messages: [{ role: 'user', content: 'x'.repeat(3_000_000) }], max_tokens: 10 }],
  ['responses max_output_tokens 1e9', '/v1/responses', { model: 'gpt-x', input: 'hi', max_output_tokens: 1_000_000_000 }],
  ['anthropic max_tokens 1e9', '/anthropic/v1/messages', { model: 'gpt-x', messages, max_tokens: 1_000_000_000 }],
];

describe('a call that can never fit the per-minute token budget', () => {
  it.each(CASES)('%s: 400 in the dialect, how much over, no retry-after, no quota, no upstream call', async (_name, path, body) => {
    const calls = up.calls.length;
    const r = await post(path, body);
    expect(r.status).toBe(400);
    expect(r.retryAfter).toBeNull();
    const message = path.startsWith('/anthropic')
      ? (r.body as { type: string; error: { type: string; message: string } }).error.message
      : (r.body as { error: { code: string; message: string } }).error.message;
    if (path.startsWith('/anthropic')) expect(r.body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    else expect(r.body).toMatchObject({ error: { type: 'invalid_request_error', code: 'request_too_large_for_limit' } });
    const m = /needs up to (\d+) tokens .*, (\d+) above this key's limit of 2000000 tokens per minute/.exec(message);
    expect(m, message).not.toBeNull();
    expect(Number(m?.[1]) - TPM).toBe(Number(m?.[2]));
    expect(up.calls.length).toBe(calls);
    expect(await gw.store.ledger('acme')).toMatchObject({ spentNano: 0, heldNano: 0, openHolds: 0 });
  });

  it('leaves the minute untouched: a call that fits is still served, one that fits the limit but not the remainder gets 429', async () => {
    // The first is held at the upstream while the second asks: its 1.5M reservation leaves the minute no room.
    up.enqueue({ kind: 'reply', delayMs: 500 });
    const first = post('/v1/chat/completions', { model: 'gpt-x', messages, max_tokens: 1_500_000 });
    await until(() => up.calls.length > 0 && up.open > 0, 5000, 'the first call at the upstream');
    const later = await post('/v1/chat/completions', { model: 'gpt-x', messages, max_tokens: 1_000_000 });
    expect((await first).status).toBe(200);
    expect(later.status).toBe(429);
    expect(later.retryAfter).not.toBeNull();
    expect(later.body).toMatchObject({ error: { code: 'rate_limited' } });
  });
});
