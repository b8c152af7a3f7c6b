// The official @anthropic-ai/sdk against the gateway's /anthropic API, served by an Anthropic-format upstream
// (pass-through) and by an OpenAI-format upstream (translated): the same tests, the same expectations.
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startEnv, upstreams, UPSTREAM_SECRET, type Env, type Upstream } from './setup.ts';

let env: Env;
let client: Anthropic;

beforeAll(async () => {
  env = await startEnv();
  client = new Anthropic({ baseURL: `${env.gw.url}/anthropic`, apiKey: env.keys.builder, authToken: null, maxRetries: 0 });
});

afterAll(async () => {
  await env.close();
});

const weather = {
  name: 'get_weather',
  description: 'Get the weather of a city',
  input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] },
};

describe.each(['anthropic', 'openai'] as const)('served by an %s-format upstream', (kind) => {
  let up: Upstream;
  beforeAll(() => {
    up = upstreams(env).find((u) => u.kind === kind) as Upstream;
  });
  beforeEach(() => up.reset());

  it('answers a message; the body names the public model; x-svc headers are set', async () => {
    const { data, response } = await client.messages
      .create({ model: up.model, max_tokens: 200, system: 'Be brief.', messages: [{ role: 'user', content: 'Hello' }] })
      .withResponse();
    expect(data.type).toBe('message');
    expect(data.role).toBe('assistant');
    expect(data.model).toBe(up.model);
    expect(data.content).toEqual([{ type: 'text', text: up.text }]);
    expect(data.stop_reason).toBe('end_turn');
    expect(data.usage.output_tokens).toBeGreaterThan(0);
    expect(response.headers.get('x-svc-served-model')).toBe(up.model);
    expect(response.headers.get('x-svc-original-model')).toBe(up.model);
    expect(response.headers.get('x-svc-fallback')).toBe('false');
    expect(response.headers.get('x-svc-upstream')).toBe(kind === 'anthropic' ? 'anthropic-a' : 'openai-a');
    expect(up.bodies()[0]?.model).toBe(kind === 'anthropic' ? 'claude-upstream' : 'gpt-upstream');
  });

  it('streams text with the SDK message stream', async () => {
    const stream = client.messages.stream({ model: up.model, max_tokens: 200, messages: [{ role: 'user', content: 'Hello' }] });
    let text = '';
    stream.on('text', (t) => (text += t));
    const final = await stream.finalMessage();
    expect(text).toBe(up.text);
    expect(final.content).toHaveLength(1);
    expect(final.content[0]).toMatchObject({ type: 'text', text: up.text });
    expect(final.model).toBe(up.model);
    expect(final.stop_reason).toBe('end_turn');
    expect(env.gw.sink.events.at(-1)).toMatchObject({ endpoint: 'messages', stream: true, status: 200, requestedModel: up.model });
  });

  it('returns tool use, then sends the tool result back as the upstream expects it', async () => {
    up.replyTools([{ id: 'toolu_w1', name: 'get_weather', input: { city: 'Paris' } }]);
    const first = await client.messages.create({
      model: up.model,
      max_tokens: 200,
      tools: [weather],
      tool_choice: { type: 'any' },
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
    });
    expect(first.stop_reason).toBe('tool_use');
    const use = first.content.find((b) => b.type === 'tool_use');
    expect(use).toMatchObject({ type: 'tool_use', id: 'toolu_w1', name: 'get_weather', input: { city: 'Paris' } });
    const second = await client.messages.create({
      model: up.model,
      max_tokens: 200,
      tools: [weather],
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_w1', content: '21 degrees' }] },
      ],
    });
    expect(second.content[0]).toMatchObject({ type: 'text', text: up.text });
    const sent = up.bodies()[1] as { messages: Array<Record<string, unknown>>; tools: unknown[]; tool_choice?: unknown };
    if (kind === 'anthropic') {
      expect(sent.messages[2]).toEqual({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_w1', content: '21 degrees' }] });
    } else {
      expect(sent.messages.at(-1)).toEqual({ role: 'tool', tool_call_id: 'toolu_w1', content: '21 degrees' });
      expect(sent.messages.at(-2)).toMatchObject({
        role: 'assistant',
        tool_calls: [{ id: 'toolu_w1', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
      });
      expect(up.bodies()[0]?.tool_choice).toBe('required');
    }
  });

  it('streams several tool uses in one turn, arguments arriving in fragments', async () => {
    up.replyTools(
      [
        { id: 'toolu_a', name: 'get_weather', input: { city: 'Paris', days: [1, 2] } },
        { id: 'toolu_b', name: 'get_weather', input: { city: 'Bogotá' } },
      ],
      'Checking both.',
    );
    const stream = client.messages.stream({ model: up.model, max_tokens: 200, tools: [weather], messages: [{ role: 'user', content: 'Paris and Bogotá?' }] });
    const jsonDeltas: string[] = [];
    stream.on('inputJson', (partial) => jsonDeltas.push(partial));
    const final = await stream.finalMessage();
    expect(final.stop_reason).toBe('tool_use');
    expect(final.content.map((b) => b.type)).toEqual(['text', 'tool_use', 'tool_use']);
    expect(final.content[0]).toMatchObject({ text: 'Checking both.' });
    expect(final.content[1]).toMatchObject({ id: 'toolu_a', name: 'get_weather', input: { city: 'Paris', days: [1, 2] } });
    expect(final.content[2]).toMatchObject({ id: 'toolu_b', name: 'get_weather', input: { city: 'Bogotá' } });
    expect(jsonDeltas.length).toBeGreaterThanOrEqual(4); // fragments reached the client as fragments
  });

  it('counts usage once, cache reads included, and records task_type without forwarding it', async () => {
    up.replyText('Cached.', { input: 1000, cacheRead: 800, output: 5 });
    const msg = await client.messages.create({
      model: up.model,
      max_tokens: 50,
      // Long enough to hold the 1000 tokens reported (usage beyond what the body can carry is clamped).
      messages: [{ role: 'user', content: 'hi'.padEnd(1000, '.') }],
      metadata: { user_id: 'u-1', task_type: 'summary' } as Anthropic.Metadata,
    });
    expect(msg.usage.input_tokens).toBe(200);
    expect(msg.usage.cache_read_input_tokens).toBe(800);
    expect(env.gw.sink.events.at(-1)).toMatchObject({ endpoint: 'messages', taskType: 'summary', inputTokens: 1000, cacheReadTokens: 800, outputTokens: 5 });
    const sent = up.bodies()[0] as { metadata?: Record<string, unknown> };
    if (kind === 'anthropic') expect(sent.metadata).toEqual({ user_id: 'u-1' });
    else expect(sent.metadata).toBeUndefined();
  });

  it('sends protocol headers only where they belong, and the target credentials, never the client key', async () => {
    await client.messages.create(
      { model: up.model, max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] },
      { headers: { 'anthropic-beta': 'prompt-caching-2024-07-31,context-1m-2025-08-07' } },
    );
    const h = up.headers()[0] ?? {};
    const all = JSON.stringify(h);
    expect(all).not.toContain(env.keys.builder.slice(7));
    if (kind === 'anthropic') {
      expect(h['anthropic-beta']).toBe('prompt-caching-2024-07-31,context-1m-2025-08-07');
      expect(h['anthropic-version']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(h['x-api-key']).toBe(UPSTREAM_SECRET);
    } else {
      expect(h['anthropic-beta']).toBeUndefined();
      expect(h['anthropic-version']).toBeUndefined();
    }
  });

  it('counts tokens', async () => {
    const r = await client.messages.countTokens({ model: up.model, system: 'Be brief.', messages: [{ role: 'user', content: 'Hello, world' }] });
    expect(r.input_tokens).toBeGreaterThan(0);
    expect(env.gw.sink.events.at(-1)).toMatchObject({ endpoint: 'count_tokens', status: 200, costNano: 0 });
    if (kind === 'openai') expect(up.bodies()).toHaveLength(0); // answered by the gateway: OpenAI has no count_tokens
  });
});

describe('key forms and the mock provider', () => {
  it('accepts the key as Authorization: Bearer (an auth token), as coding agents send it', async () => {
    const bearer = new Anthropic({ baseURL: `${env.gw.url}/anthropic`, apiKey: null, authToken: env.keys.builder, maxRetries: 0 });
    const msg = await bearer.messages.create({ model: 'mock-mini', max_tokens: 50, messages: [{ role: 'user', content: 'ping' }] });
    expect(msg.content[0]).toMatchObject({ type: 'text', text: 'Hello from mock-mini. You said: ping' });
  });

  it('streams from the built-in mock (OpenAI protocol) through the translator', async () => {
    const final = await client.messages.stream({ model: 'mock-mini', max_tokens: 3, messages: [{ role: 'user', content: 'a long question' }] }).finalMessage();
    expect(final.stop_reason).toBe('max_tokens');
    expect(final.usage.output_tokens).toBe(3);
  });

  it('lists models in Anthropic format, one by one and by page', async () => {
    const ids: string[] = [];
    for await (const m of client.models.list({ limit: 2 })) ids.push(m.id);
    expect(ids).toEqual(['claude-test', 'gpt-test', 'mixed', 'mock-mini']); // chat models only, sorted
    const one = await client.models.retrieve('gpt-test');
    expect(one).toMatchObject({ type: 'model', id: 'gpt-test', display_name: 'gpt-test' });
    const missing = await client.models.retrieve('nope').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(Anthropic.NotFoundError);
  });
});
