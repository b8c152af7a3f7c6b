// The Anthropic endpoint's refusals and failures: plan gate, keys, bad input (always 4xx in Anthropic's shape,
// never 5xx), cut streams (an explicit error event), fallbacks across protocols, the probe and the model list.
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ANTHROPIC_FAKE_REPLY } from '../fakes/anthropic-upstream.ts';
import { startEnv, OPENAI_FAKE_REPLY, type Env } from './setup.ts';

let env: Env;

beforeAll(async () => {
  env = await startEnv();
});

afterAll(async () => {
  await env.close();
});

beforeEach(() => {
  for (const f of [env.anthropic, env.openai]) f.calls.length = 0;
  env.anthropic.fallback = () => ({ kind: 'reply' });
  env.openai.fallback = () => ({ kind: 'reply' });
});

interface AnthropicErrorBody {
  type: string;
  error: { type: string; message: string };
}

async function post(path: string, body: unknown, headers: Record<string, string> = {}, raw = false) {
  const res = await fetch(`${env.gw.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': env.keys.builder, ...headers },
    body: raw ? (body as string) : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, text, json: JSON.parse(text) as AnthropicErrorBody, headers: res.headers };
}

const msgs = [{ role: 'user', content: 'hi' }];
const ok = { model: 'claude-test', max_tokens: 10, messages: msgs };

describe('plan gate and keys, in Anthropic shape', () => {
  it('refuses a free-plan key with 403 permission_error, while the OpenAI API serves it the cheap model', async () => {
    const events = env.gw.sink.events.length;
    const r = await post('/anthropic/v1/messages', { ...ok, model: 'mock-mini' }, { 'x-api-key': env.keys.free });
    expect(r.status).toBe(403);
    expect(r.json).toMatchObject({ type: 'error', error: { type: 'permission_error' } });
    expect(r.json.error.message).toContain('Anthropic-compatible endpoint');
    expect(env.gw.sink.events.length).toBe(events); // refused before admission: nothing held, nothing charged
    const count = await post('/anthropic/v1/messages/count_tokens', { model: 'mock-mini', messages: msgs }, { 'x-api-key': env.keys.free });
    expect(count.status).toBe(403);
    const viaOpenAI = await fetch(`${env.gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${env.keys.free}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mock-mini', messages: msgs }),
    });
    expect(viaOpenAI.status).toBe(200);
  });

  it.each([
    ['a revoked key', () => ({ 'x-api-key': env.keys.revoked })],
    ['a revoked key as a bearer token', () => ({ 'x-api-key': '', authorization: `Bearer ${env.keys.revoked}` })],
    ['no key', () => ({ 'x-api-key': '' })],
    ['a malformed key', () => ({ 'x-api-key': 'sk-ant-api03-not-ours' })],
  ])('answers 401 authentication_error for %s', async (_n, h) => {
    const r = await post('/anthropic/v1/messages', ok, h());
    expect(r.status).toBe(401);
    expect(r.json).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    expect(env.anthropic.calls).toHaveLength(0);
  });

  it('surfaces as the SDK error classes', async () => {
    const free = new Anthropic({ baseURL: `${env.gw.url}/anthropic`, apiKey: env.keys.free, authToken: null, maxRetries: 0 });
    await expect(free.messages.create({ model: 'mock-mini', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })).rejects.toBeInstanceOf(
      Anthropic.PermissionDeniedError,
    );
    const revoked = new Anthropic({ baseURL: `${env.gw.url}/anthropic`, apiKey: env.keys.revoked, authToken: null, maxRetries: 0 });
    await expect(revoked.messages.create({ model: 'mock-mini', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })).rejects.toBeInstanceOf(
      Anthropic.AuthenticationError,
    );
  });
});

describe('bad input gets 4xx in Anthropic shape and never reaches the upstream', () => {
  it.each([
    ['malformed JSON', '{"model": "claude-test", "max_tokens": 5, "messages": [', 400, 'invalid_request_error', true],
    ['an empty body', '', 400, 'invalid_request_error', true],
    ['missing max_tokens', { model: 'claude-test', messages: msgs }, 400, 'invalid_request_error', false],
    ['missing messages', { model: 'claude-test', max_tokens: 5 }, 400, 'invalid_request_error', false],
    ['missing model', { max_tokens: 5, messages: msgs }, 400, 'invalid_request_error', false],
    ['messages of the wrong type', { model: 'claude-test', max_tokens: 5, messages: 'hi' }, 400, 'invalid_request_error', false],
    ['max_tokens of the wrong type', { model: 'claude-test', max_tokens: '5', messages: msgs }, 400, 'invalid_request_error', false],
    ['a zero max_tokens', { model: 'claude-test', max_tokens: 0, messages: msgs }, 400, 'invalid_request_error', false],
    ['an unknown role', { model: 'claude-test', max_tokens: 5, messages: [{ role: 'tool', content: 'x' }] }, 400, 'invalid_request_error', false],
    ['a temperature above 1', { ...ok, temperature: 1.5 }, 400, 'invalid_request_error', false],
    ['a block without type', { ...ok, messages: [{ role: 'user', content: [{ text: 'x' }] }] }, 400, 'invalid_request_error', false],
    [
      'a text block without text (OpenAI upstream)',
      { ...ok, model: 'gpt-test', messages: [{ role: 'user', content: [{ type: 'text' }] }] },
      400,
      'invalid_request_error',
      false,
    ],
    [
      'a document for an OpenAI upstream',
      {
        ...ok,
        model: 'gpt-test',
        messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'x' } }] }],
      },
      400,
      'invalid_request_error',
      false,
    ],
    ['a task_type of 65 characters', { ...ok, metadata: { task_type: 'x'.repeat(65) } }, 400, 'invalid_request_error', false],
    ['an unknown model', { ...ok, model: 'claude-99' }, 404, 'not_found_error', false],
    ['an embeddings model', { ...ok, model: 'embed-test' }, 400, 'invalid_request_error', false],
  ])('%s', async (_name, body, status, type, raw) => {
    const r = await post('/anthropic/v1/messages', body, {}, raw as boolean);
    expect(r.status).toBe(status);
    expect(r.json.type).toBe('error');
    expect(r.json.error.type).toBe(type);
    expect(r.json.error.message.length).toBeGreaterThan(5);
    expect(env.anthropic.calls.length + env.openai.calls.length).toBe(0);
  });

  it('answers an unknown path under /anthropic with 404 not_found_error', async () => {
    const r = await post('/anthropic/v1/complete', ok);
    expect(r.status).toBe(404);
    expect(r.json).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
  });

  it('passes an upstream 400 through in Anthropic shape, with its message', async () => {
    env.anthropic.fallback = () => ({
      kind: 'status',
      status: 400,
      body: { type: 'error', error: { type: 'invalid_request_error', message: 'messages.0: bad block' } },
    });
    const r = await post('/anthropic/v1/messages', ok);
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ type: 'invalid_request_error' });
    expect(r.json.error.message).toContain('messages.0: bad block');
  });

  it('never answers 5xx to fuzzed bodies', async () => {
    let seed = 11;
    const rnd = (n: number) => (seed = (seed * 48271) % 2147483647) % n;
    const values: unknown[] = [
      null,
      true,
      0,
      -1,
      1.5,
      'x',
      '',
      [],
      {},
      [{}],
      [{ role: 'user' }],
      [{ role: 'user', content: [{ type: 'image' }] }],
      [{ role: 'assistant', content: [{ type: 'tool_use' }] }],
      [{ role: 'user', content: [{ type: 'tool_result', content: [{ type: 5 }] }] }],
      { type: 'tool' },
      'sk-svc-',
      '𝕏',
    ];
    const fields = ['model', 'messages', 'max_tokens', 'system', 'tools', 'tool_choice', 'metadata', 'stream', 'temperature', 'stop_sequences'];
    for (let i = 0; i < 150; i++) {
      const body: Record<string, unknown> = {};
      for (const f of fields) if (rnd(2)) body[f] = values[rnd(values.length)];
      if (rnd(2)) body.model = ['claude-test', 'gpt-test', 'mock-mini'][rnd(3)];
      if (rnd(2)) body.max_tokens = 5;
      const path = rnd(4) === 0 ? '/anthropic/v1/messages/count_tokens' : '/anthropic/v1/messages';
      const r = await post(path, body);
      expect(r.status, JSON.stringify(body)).toBeLessThan(500);
      if (r.status >= 400) expect(r.json.type).toBe('error');
    }
  });
});

describe('after the first byte', () => {
  it.each([
    ['an Anthropic upstream that cuts the connection', 'claude-test', () => env.anthropic.enqueue({ kind: 'cut', afterEvents: 4 })],
    ['an Anthropic upstream that stalls', 'claude-test', () => env.anthropic.enqueue({ kind: 'stall-mid', afterEvents: 4 })],
    ['an Anthropic upstream that sends an error event', 'claude-test', () => env.anthropic.enqueue({ kind: 'error-event', afterEvents: 4 })],
    ['an OpenAI upstream that cuts the connection', 'gpt-test', () => env.openai.enqueue({ kind: 'cut', afterChunks: 3 })],
    ['an OpenAI upstream that stalls', 'gpt-test', () => env.openai.enqueue({ kind: 'stall-mid', afterChunks: 3 })],
  ])('ends with an Anthropic error event, never a clean end, on %s', async (_n, model, script) => {
    script();
    const client = new Anthropic({ baseURL: `${env.gw.url}/anthropic`, apiKey: env.keys.builder, authToken: null, maxRetries: 0 });
    const stream = client.messages.stream({ model, max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] });
    let text = '';
    stream.on('text', (t) => (text += t));
    const err = await stream.finalMessage().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect(text.length).toBeGreaterThan(0);
    expect(env.gw.sink.events.at(-1)).toMatchObject({ endpoint: 'messages', status: 502, errorCode: 'upstream_stream_error' });
    expect(env.gw.sink.events.at(-1)?.outputTokens).toBeGreaterThan(0);
  });

  it('writes the error event on the wire as Anthropic does', async () => {
    env.anthropic.enqueue({ kind: 'cut', afterEvents: 4 });
    const res = await fetch(`${env.gw.url}/anthropic/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': env.keys.builder },
      body: JSON.stringify({ ...ok, stream: true }),
    });
    const text = await res.text();
    expect(text.startsWith('event: message_start\n')).toBe(true);
    expect(text).toMatch(/event: error\ndata: \{"type":"error","error":\{"type":"api_error","message":"[^"]+"\}\}\n\n$/);
    expect(text).not.toContain('message_stop');
  });
});

describe('fallback across protocols', () => {
  it.each([
    ['upstream_5xx', () => env.anthropic.enqueue({ kind: 'status', status: 529 })],
    ['timeout', () => env.anthropic.enqueue({ kind: 'stall' })],
    ['upstream_5xx', () => env.anthropic.enqueue({ kind: 'error-event', afterEvents: 0 })],
  ])('falls back from the Anthropic target to the OpenAI one on %s, translating the same request', async (reason, script) => {
    script();
    const client = new Anthropic({ baseURL: `${env.gw.url}/anthropic`, apiKey: env.keys.builder, authToken: null, maxRetries: 0 });
    const { data, response } = await client.messages
      .create({ model: 'mixed', max_tokens: 20, stream: true, messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    let text = '';
    for await (const ev of data) if (ev.type === 'content_block_delta' && ev.delta.type === 'text_delta') text += ev.delta.text;
    expect(text).toBe(OPENAI_FAKE_REPLY);
    expect(response.headers.get('x-svc-upstream')).toBe('mixed-openai');
    expect(response.headers.get('x-svc-fallback')).toBe('true');
    expect(response.headers.get('x-svc-fallback-reason')).toBe(reason);
    expect(env.openai.calls[0]?.body).toMatchObject({ model: 'gpt-upstream', messages: [{ role: 'user', content: 'hi' }], stream: true });
    expect(env.gw.sink.events.at(-1)).toMatchObject({ endpoint: 'messages', fallback: true, fallbackReason: reason, upstream: 'mixed-openai', status: 200 });
  });

  it('serves an OpenAI client from the Anthropic target of the same route', async () => {
    const res = await fetch(`${env.gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${env.keys.builder}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mixed', messages: msgs }),
    });
    const body = (await res.json()) as { choices: Array<{ message: { content: string } }> };
    expect(body.choices[0]?.message.content).toBe(ANTHROPIC_FAKE_REPLY);
    expect(res.headers.get('x-svc-upstream')).toBe('mixed-anthropic');
  });
});

describe('what Claude Code probes besides messages', () => {
  it('answers HEAD and GET on {base}/api/hello and on the base URL', async () => {
    for (const path of ['/anthropic/api/hello', '/anthropic', '/anthropic/']) {
      expect((await fetch(`${env.gw.url}${path}`, { method: 'HEAD' })).status).toBe(200);
      expect((await fetch(`${env.gw.url}${path}`)).status).toBe(200);
    }
  });

  it('lists models backwards with before_id and reports paging fields', async () => {
    const r = (await (await fetch(`${env.gw.url}/anthropic/v1/models?limit=2&before_id=mock-mini`)).json()) as Record<string, unknown>;
    expect(r).toEqual({
      data: [
        { type: 'model', id: 'gpt-test', display_name: 'gpt-test', created_at: '2026-01-01T00:00:00Z' },
        { type: 'model', id: 'mixed', display_name: 'mixed', created_at: '2026-01-01T00:00:00Z' },
      ],
      has_more: true,
      first_id: 'gpt-test',
      last_id: 'mixed',
    });
    const bad = await fetch(`${env.gw.url}/anthropic/v1/models?limit=0`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as AnthropicErrorBody).error.type).toBe('invalid_request_error');
  });
});
