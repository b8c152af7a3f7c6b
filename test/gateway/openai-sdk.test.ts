// The official openai SDK against the gateway, served by a fake OpenAI-format upstream.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../fakes/upstream.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { basics, route } from '../helpers/manifests.ts';

let up: FakeUpstream;
let gw: TestGateway;
let client: OpenAI;
let keys: ReturnType<typeof basics>['keys'];

beforeAll(async () => {
  up = await startFakeUpstream();
  const b = basics();
  keys = b.keys;
  gw = await startGateway([
    ...b.docs,
    route('gpt-test', [{ name: 'fake-a', provider: 'openai', baseUrl: up.baseUrl, upstreamModel: 'upstream-gpt' }]),
    route('embed-test', [{ name: 'fake-e', provider: 'openai', baseUrl: up.baseUrl, upstreamModel: 'upstream-embed' }], { type: 'embeddings' }),
    route('mock-mini', [{ name: 'mock-a', provider: 'mock' }]),
  ]);
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: keys.builder, maxRetries: 0 });
});

afterAll(async () => {
  await gw.close();
  await up.close();
});

describe('chat completions', () => {
  it('returns a completion whose model is the served model, with the x-svc headers', async () => {
    const { data, response } = await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'Hi' }] }).withResponse();
    expect(data.choices[0]?.message.content).toBe('Hello from the fake upstream.');
    expect(data.model).toBe('gpt-test');
    expect(data.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 7 });
    expect(response.headers.get('x-svc-upstream')).toBe('fake-a');
    expect(response.headers.get('x-svc-served-model')).toBe('gpt-test');
    expect(response.headers.get('x-svc-original-model')).toBe('gpt-test');
    expect(response.headers.get('x-svc-fallback')).toBe('false');
    expect(response.headers.get('x-svc-fallback-reason')).toBeNull();
    const sent = up.calls.at(-1);
    expect(sent?.body.model).toBe('upstream-gpt');
  });

  it('streams chunks; the usage chunk reaches the client only when it asked', async () => {
    const without = await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'Hi' }], stream: true });
    let text = '';
    for await (const chunk of without) {
      expect(chunk.model).toBe('gpt-test');
      expect(chunk.usage ?? null).toBeNull();
      text += chunk.choices[0]?.delta.content ?? '';
    }
    expect(text).toBe('Hello from the fake upstream.');
    // Forced upstream so tokens are always counted:
    expect(up.calls.at(-1)?.body.stream_options).toEqual({ include_usage: true });
    expect(gw.sink.events.at(-1)).toMatchObject({ stream: true, inputTokens: 11, outputTokens: 7, status: 200 });

    const withUsage = await client.chat.completions.create({
      model: 'gpt-test',
      messages: [{ role: 'user', content: 'Hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const usages = [];
    for await (const chunk of withUsage) if (chunk.usage) usages.push(chunk.usage);
    expect(usages).toEqual([{ prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 }]);
  });

  it('records metadata.task_type on the usage event and does not forward it', async () => {
    await client.chat.completions.create({
      model: 'gpt-test',
      messages: [{ role: 'user', content: 'Translate' }],
      metadata: { task_type: 'translation' },
    });
    expect(up.calls.at(-1)?.body.metadata).toBeUndefined();
    const e = gw.sink.events.at(-1);
    expect(e).toMatchObject({ taskType: 'translation', apiKey: 'builder-key', account: 'acme', endpoint: 'chat.completions', requestedModel: 'gpt-test' });
    // 11 input tokens at 1.04 USD/MTok + 7 output at 2.08 USD/MTok, in nano-USD; 4/104 of it is the fee.
    expect(e?.costNano).toBe(11 * 1040 + 7 * 2080);
    expect(e?.feeNano).toBe(Math.floor(((11 * 1040 + 7 * 2080) * 4) / 104));
  });

  it('serves the built-in mock provider with deterministic replies', async () => {
    const a = await client.chat.completions.create({ model: 'mock-mini', messages: [{ role: 'user', content: 'ping' }] });
    const b = await client.chat.completions.create({ model: 'mock-mini', messages: [{ role: 'user', content: 'ping' }] });
    expect(a.choices[0]?.message.content).toContain('You said: ping');
    expect(a.choices[0]?.message.content).toBe(b.choices[0]?.message.content);
    expect(a.usage).toEqual(b.usage);
  });
});

describe('embeddings', () => {
  it('embeds a string and an array of multilingual strings', async () => {
    const one = await client.embeddings.create({ model: 'embed-test', input: 'hello' });
    expect(one.data).toHaveLength(1);
    expect(one.model).toBe('embed-test');
    const many = await client.embeddings.create({ model: 'embed-test', input: ['hello', 'こんにちは', 'привет', 'مرحبا'] });
    expect(many.data.map((d) => d.index)).toEqual([0, 1, 2, 3]);
    expect(up.calls.at(-1)?.body.input).toEqual(['hello', 'こんにちは', 'привет', 'مرحبا']);
    expect(gw.sink.events.at(-1)).toMatchObject({ endpoint: 'embeddings', inputTokens: 20, outputTokens: 0 });
  });
});

describe('models and /v1/me', () => {
  it('lists the models without a key, in OpenAI list format', async () => {
    const anon = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'none', maxRetries: 0 });
    const ids = [];
    for await (const m of anon.models.list()) ids.push(m.id);
    expect(ids.sort()).toEqual(['embed-test', 'gpt-test', 'mock-mini']);
    const one = await anon.models.retrieve('gpt-test');
    expect(one).toMatchObject({ id: 'gpt-test', object: 'model', owned_by: 'svc-gateway' });
  });

  it('reports the key, plan, balance and limits', async () => {
    const res = await fetch(`${gw.url}/v1/me`, { headers: { authorization: `Bearer ${keys.builder}` } });
    expect(res.status).toBe(200);
    const me = (await res.json()) as Record<string, unknown>;
    expect(me).toMatchObject({
      key: { name: 'builder-key', display: `sk-svc-…${keys.builder.slice(-4)}`, state: 'active' },
      account: 'acme',
      plan: 'builder',
      monthly_budget_usd: null,
      rpm_limit: null,
      tpm_limit: null,
      model_whitelist: null,
    });
    const spent = gw.sink.events.filter((e) => e.account === 'acme').reduce((s, e) => s + e.costNano, 0);
    expect(me.balance_usd).toBeCloseTo(101 - spent / 1e9, 9);
    expect(me.month_spend_usd).toBeCloseTo(spent / 1e9, 9);
    expect(JSON.stringify(me)).not.toContain(keys.builder);
  });
});
