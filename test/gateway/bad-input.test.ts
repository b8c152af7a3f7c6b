// Hostile and mistaken input: each gets the documented status and error body, costs no quota, never a 5xx.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../gateway/contract/keys.ts';
import { startFakeUpstream, type FakeUpstream } from '../fakes/upstream.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { apiKey, basics, route } from '../helpers/manifests.ts';

let up: FakeUpstream;
let gw: TestGateway;
let keys: ReturnType<typeof basics>['keys'];
let revokedKey: string;
let listKey: string;
let lookups = 0;

beforeAll(async () => {
  up = await startFakeUpstream();
  const b = basics();
  keys = b.keys;
  const revoked = apiKey('old-key', 'acme', { revoked: true });
  const limited = apiKey('list-key', 'acme', { models: ['chat-*'] });
  revokedKey = revoked.key;
  listKey = limited.key;
  gw = await startGateway(
    [
      ...b.docs,
      ...revoked.docs,
      ...limited.docs,
      route('chat-a', [{ name: 'a', provider: 'openai', baseUrl: up.baseUrl }]),
      route('pro', [{ name: 'p', provider: 'openai', baseUrl: up.baseUrl }], { minTier: 2 }),
      route('embed', [{ name: 'e', provider: 'openai', baseUrl: up.baseUrl }], { type: 'embeddings' }),
    ],
    { bodyLimit: 64 * 1024 },
  );
  const find = gw.store.findKey.bind(gw.store);
  gw.store.findKey = (hash: string) => {
    lookups++;
    return find(hash);
  };
});

afterAll(async () => {
  await gw.close();
  await up.close();
});

async function post(path: string, body: unknown, key: string | null = keys.builder, raw = false) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (key !== null) headers.authorization = `Bearer ${key}`;
  const res = await fetch(`${gw.url}${path}`, { method: 'POST', headers, body: raw ? (body as string) : JSON.stringify(body) });
  const text = await res.text();
  return {
    status: res.status,
    body: JSON.parse(text) as { error: { message: string; type: string; code: string; param: string | null } },
    headers: res.headers,
  };
}

const msgs = [{ role: 'user', content: 'hi' }];

describe('bad requests get the documented status and an OpenAI-style body', () => {
  it.each([
    ['malformed JSON', '{"model": "chat-a", "messages": [', 400, 'invalid_json', true],
    ['an empty body', '', 400, 'invalid_json', true],
    ['a JSON array', [], 400, 'invalid_request', false],
    ['missing messages', { model: 'chat-a' }, 400, 'invalid_request', false],
    ['missing model', { messages: msgs }, 400, 'invalid_request', false],
    ['a wrong type', { model: 'chat-a', messages: 'hi' }, 400, 'invalid_request', false],
    ['an unknown role', { model: 'chat-a', messages: [{ role: 'wizard', content: 'x' }] }, 400, 'invalid_request', false],
    ['empty messages', { model: 'chat-a', messages: [] }, 400, 'invalid_request', false],
    ['a negative max_tokens', { model: 'chat-a', messages: msgs, max_tokens: -1 }, 400, 'invalid_request', false],
    ['a task_type of 65 characters', { model: 'chat-a', messages: msgs, metadata: { task_type: 'x'.repeat(65) } }, 400, 'task_type_too_long', false],
    ['a task_type that is not a string', { model: 'chat-a', messages: msgs, metadata: { task_type: 7 } }, 400, 'invalid_request', false],
    ['an unknown model', { model: 'gpt-99', messages: msgs }, 404, 'model_not_found', false],
    ['an embeddings model on chat', { model: 'embed', messages: msgs }, 400, 'invalid_request', false],
    ['a body over the limit', { model: 'chat-a', messages: [{ role: 'user', content: 'x'.repeat(70_000) }] }, 413, 'request_too_large', false],
  ])('%s', async (_name, body, status, code, raw) => {
    const before = up.calls.length;
    const r = await post('/v1/chat/completions', body, keys.builder, raw as boolean);
    expect(r.status).toBe(status);
    expect(r.body.error.code).toBe(code);
    expect(r.body.error.message.length).toBeGreaterThan(5);
    expect(up.calls.length).toBe(before); // never reached the upstream
  });

  it('accepts a task_type of exactly 64 characters (multi-byte counted as characters)', async () => {
    const r = await post('/v1/chat/completions', { model: 'chat-a', messages: msgs, metadata: { task_type: 'é'.repeat(64) } });
    expect(r.status).toBe(200);
  });

  it('refuses models outside the plan or the whitelist with 403', async () => {
    expect((await post('/v1/chat/completions', { model: 'pro', messages: msgs }, keys.free)).status).toBe(403);
    const r = await post('/v1/embeddings', { model: 'embed', input: 'x' }, listKey);
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe('model_not_allowed');
    expect((await post('/v1/chat/completions', { model: 'chat-a', messages: msgs }, listKey)).status).toBe(200);
  });

  it('answers unknown paths with a 404 in OpenAI shape', async () => {
    const r = await post('/v1/completions-typo', {});
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe('not_found');
  });
});

describe('keys', () => {
  it.each([
    ['no key', null, 'missing_api_key'],
    ['a malformed key', 'sk-svc-short', 'invalid_api_key'],
    ['a key with a bad checksum', badChecksum(), 'invalid_api_key'],
  ])('401 for %s, without any store lookup', async (_n, key, code) => {
    const before = lookups;
    const r = await post('/v1/chat/completions', { model: 'chat-a', messages: msgs }, key);
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe(code);
    expect(lookups).toBe(before);
  });

  it('401 for an unknown well-formed key and for a revoked key', async () => {
    const unknown = await post('/v1/chat/completions', { model: 'chat-a', messages: msgs }, generateKey());
    expect(unknown.status).toBe(401);
    expect(unknown.body.error.code).toBe('invalid_api_key');
    const revoked = await post('/v1/chat/completions', { model: 'chat-a', messages: msgs }, revokedKey);
    expect(revoked.status).toBe(401);
    expect(revoked.body.error.code).toBe('key_revoked');
    const me = await fetch(`${gw.url}/v1/me`, { headers: { authorization: `Bearer ${revokedKey}` } });
    expect(me.status).toBe(401);
  });

  it('never echoes a key in an error', async () => {
    const k = generateKey();
    const r = await post('/v1/chat/completions', { model: 'chat-a', messages: msgs }, k);
    expect(JSON.stringify(r.body)).not.toContain(k.slice(7));
  });
});

function badChecksum(): string {
  const k = generateKey();
  return k.slice(0, -1) + (k.endsWith('A') ? 'B' : 'A');
}

describe('CORS', () => {
  it('answers a preflight with the spec table, expanding x-stainless-* to the asked headers', async () => {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,content-type,x-stainless-os,x-stainless-lang',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-methods')).toBe('POST, GET, OPTIONS');
    expect(res.headers.get('access-control-allow-headers')).toBe(
      'authorization, content-type, x-api-key, anthropic-version, cache-control, x-svc-cache, x-stainless-*, x-stainless-os, x-stainless-lang',
    );
    expect(res.headers.get('access-control-expose-headers')).toBe(
      'x-svc-upstream, x-svc-fallback, x-svc-original-model, x-svc-served-model, x-svc-fallback-reason, x-svc-dropped-tools, x-svc-key-expires-in, x-svc-cache, retry-after',
    );
  });

  it('allows the headers the Anthropic SDK sends from a browser', async () => {
    const res = await fetch(`${gw.url}/anthropic/v1/messages`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'x-api-key,anthropic-version,anthropic-beta,anthropic-dangerous-direct-browser-access,x-evil',
      },
    });
    expect(res.status).toBe(204);
    const allowed = res.headers.get('access-control-allow-headers') ?? '';
    expect(allowed).toContain('anthropic-dangerous-direct-browser-access');
    expect(allowed).toContain('anthropic-beta');
    expect(allowed).not.toContain('x-evil');
  });

  it('sets allow-origin and expose-headers on answers, errors included', async () => {
    const ok = await post('/v1/chat/completions', { model: 'chat-a', messages: msgs });
    expect(ok.headers.get('access-control-allow-origin')).toBe('*');
    expect(ok.headers.get('access-control-expose-headers')).toContain('x-svc-served-model');
    const bad = await post('/v1/chat/completions', {}, null);
    expect(bad.headers.get('access-control-allow-origin')).toBe('*');
  });
});

describe('fuzzed bodies', () => {
  it('never answers 5xx and never reaches the upstream', async () => {
    let seed = 7;
    const rnd = (n: number) => (seed = (seed * 48271) % 2147483647) % n;
    const values: unknown[] = [
      null,
      true,
      0,
      -1,
      1e308,
      'x',
      '',
      [],
      {},
      [{}],
      { role: 'user' },
      { role: 'user', content: 5 },
      'sk-svc-',
      '\u0000',
      '𝕏'.repeat(10),
    ];
    const fields = ['model', 'messages', 'stream', 'max_tokens', 'metadata', 'stream_options', 'tools', 'n'];
    const before = up.calls.length;
    for (let i = 0; i < 150; i++) {
      const body: Record<string, unknown> = {};
      for (const f of fields) if (rnd(2)) body[f] = values[rnd(values.length)];
      if (rnd(3) === 0) body.model = 'chat-a';
      const r = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${keys.builder}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(r.status, JSON.stringify(body)).toBeLessThan(500);
      await r.text();
    }
    const reached = up.calls.length - before;
    const events = gw.sink.events.filter((e) => e.costNano > 0 && e.status >= 400);
    expect(events).toHaveLength(0); // invalid requests cost nothing
    expect(reached).toBeLessThan(150);
  });
});
