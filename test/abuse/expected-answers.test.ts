// Issue 18, items 2, 5, 6 and 7: the exact answer to each hostile request a probe found mishandled, always in the
// caller's dialect, and refused before anything is spent (no store call, no upstream call).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic-upstream.ts';
import { startFakeUpstream, type FakeUpstream } from '../fakes/upstream.ts';
import { dialectOfPath, dialectProblem, errorCodeOf } from './dialect.ts';
import { startAbuseGateway, type AbuseGateway } from './harness.ts';
import { abuseConfig, ACCOUNT } from './manifests.ts';
import { rawRequest, requestBytes } from './raw-http.ts';

let openai: FakeUpstream;
let anthropic: FakeAnthropic;
let gw: AbuseGateway;
let key: string;

beforeAll(async () => {
  [openai, anthropic] = await Promise.all([startFakeUpstream('expected-openai'), startFakeAnthropic('expected-anthropic')]);
  const cfg = abuseConfig({ openai: openai.baseUrl, anthropic: anthropic.baseUrl });
  key = cfg.key;
  gw = await startAbuseGateway(cfg.docs);
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([openai?.close(), anthropic?.close()]);
});

const msgs = [{ role: 'user', content: 'hi' }];
const BODIES: Record<string, (extra: Record<string, unknown>) => Record<string, unknown>> = {
  '/v1/chat/completions': (x) => ({ model: 'chat-o', messages: msgs, ...x }),
  '/v1/embeddings': (x) => ({ model: 'embed', input: 'hi', ...x }),
  '/anthropic/v1/messages': (x) => ({ model: 'chat-a', max_tokens: 20, messages: msgs, ...x }),
  '/anthropic/v1/messages/count_tokens': (x) => ({ model: 'chat-a', messages: msgs, ...x }),
};

/** A JSON text nested `depth` levels deep (arrays or objects), spliced into a body as raw text. */
function nested(depth: number, kind: 'array' | 'object'): string {
  return kind === 'array' ? `${'['.repeat(depth)}1${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

function withRaw(body: Record<string, unknown>, field: string, raw: string): string {
  const text = JSON.stringify({ ...body, [field]: '__RAW__' });
  return text.replace('"__RAW__"', raw);
}

async function send(path: string, body: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string; headers: Headers }> {
  const res = await fetch(`${gw.url}${path}`, {
    method: 'POST',
    body,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
  });
  return { status: res.status, text: await res.text(), headers: res.headers };
}

function expectError(path: string, r: { status: number; text: string }, status: number, code: string): void {
  expect(r.status, r.text.slice(0, 300)).toBe(status);
  expect(dialectProblem(dialectOfPath(path), r.text)).toBeNull();
  expect(errorCodeOf(r.text)).toBe(code);
}

const invalid = (path: string): string => (dialectOfPath(path) === 'anthropic' ? 'invalid_request_error' : 'invalid_request');

describe('a body nested deeper than 128 levels', () => {
  const cases = Object.keys(BODIES).flatMap(
    (path) =>
      [
        [path, 'an unknown field, 10,000 arrays', 'x', nested(10_000, 'array')],
        [path, 'an unknown field, 200 objects', 'x', nested(200, 'object')],
        [path, 'metadata, 10,000 objects', 'metadata', `{"deep":${nested(10_000, 'object')}}`],
        [path, 'the model field, 1,000 arrays', 'model', nested(1000, 'array')],
      ] as const,
  );

  it.each(cases)('%s, %s: 400 before any store or upstream call', async (path, _what, field, raw) => {
    const body = withRaw((BODIES[path] as (x: object) => Record<string, unknown>)({}), field, raw);
    const store = gw.totalStoreCalls();
    const upstream = openai.calls.length + anthropic.calls.length;
    const r = await send(path, body);
    expectError(path, r, 400, invalid(path));
    expect(gw.totalStoreCalls(), 'store calls made for it').toBe(store);
    expect(openai.calls.length + anthropic.calls.length, 'upstream calls made for it').toBe(upstream);
  });

  it("in a message's content block too (the translators must never see it)", async () => {
    for (const path of ['/v1/chat/completions', '/anthropic/v1/messages']) {
      const content = `[{"type":"text","text":"hi","x":${nested(10_000, 'array')}}]`;
      const body = withRaw((BODIES[path] as (x: object) => Record<string, unknown>)({}), 'messages', `[{"role":"user","content":${content}}]`);
      const store = gw.totalStoreCalls();
      expectError(path, await send(path, body), 400, invalid(path));
      expect(gw.totalStoreCalls()).toBe(store);
    }
  });

  it('a body 100 levels deep is still served', async () => {
    for (const path of ['/v1/chat/completions', '/anthropic/v1/messages']) {
      const body = withRaw((BODIES[path] as (x: object) => Record<string, unknown>)({}), 'x', nested(100, 'array'));
      const r = await send(path, body);
      expect(r.status, r.text.slice(0, 300)).toBe(200);
    }
  });
});

describe('output caps at the edge of what a number can hold', () => {
  const caps = [Number.MAX_SAFE_INTEGER, 2 ** 53 + 2, 1e308, 2 ** 63];
  it.each(caps)("max_tokens %s: a 4xx in the caller's dialect, never a 5xx, nothing held", async (cap) => {
    for (const path of ['/v1/chat/completions', '/anthropic/v1/messages']) {
      const r = await send(path, JSON.stringify((BODIES[path] as (x: object) => Record<string, unknown>)({ max_tokens: cap })));
      expect(r.status, r.text.slice(0, 300)).toBeGreaterThanOrEqual(400);
      expect(r.status, r.text.slice(0, 300)).toBeLessThan(500);
      expect(dialectProblem(dialectOfPath(path), r.text)).toBeNull();
    }
    expect((await gw.ledger(ACCOUNT)).openHolds).toBe(0);
  });
});

describe('content types', () => {
  it.each(['text/plain', 'text/plain; charset=utf-8', 'application/x-www-form-urlencoded'])('a %s body holding valid JSON is read as JSON', async (type) => {
    const r = await send('/v1/chat/completions', JSON.stringify(BODIES['/v1/chat/completions']?.({})), { 'content-type': type });
    expect(r.status, r.text.slice(0, 300)).toBe(200);
    const a = await send('/anthropic/v1/messages', JSON.stringify(BODIES['/anthropic/v1/messages']?.({})), { 'content-type': type });
    expect(a.status, a.text.slice(0, 300)).toBe(200);
  });
});

describe('names that are properties of every JavaScript object', () => {
  const names = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf'];

  it.each(names)('GET /v1/models/%s: 404 model_not_found', async (name) => {
    const res = await fetch(`${gw.url}/v1/models/${name}`);
    const text = await res.text();
    expect(res.status, text).toBe(404);
    expect(dialectProblem('openai', text)).toBeNull();
    expect(errorCodeOf(text)).toBe('model_not_found');
    const a = await fetch(`${gw.url}/anthropic/v1/models/${name}`);
    const at = await a.text();
    expect(a.status, at).toBe(404);
    expect(dialectProblem('anthropic', at)).toBeNull();
  });

  it.each(names)('model "%s": 404 model_not_found on every model endpoint', async (name) => {
    for (const path of Object.keys(BODIES)) {
      const r = await send(path, JSON.stringify((BODIES[path] as (x: object) => Record<string, unknown>)({ model: name })));
      expectError(path, r, 404, dialectOfPath(path) === 'anthropic' ? 'not_found_error' : 'model_not_found');
    }
  });
});

describe('keys', () => {
  it.each(['/v1/chat/completions', '/anthropic/v1/messages'])(
    '%s: Authorization: <key> without Bearer is 401 invalid_api_key, saying to use Bearer',
    async (path) => {
      const before = gw.calls.findKey;
      const r = await send(path, JSON.stringify((BODIES[path] as (x: object) => Record<string, unknown>)({})), { authorization: key });
      expectError(path, r, 401, dialectOfPath(path) === 'anthropic' ? 'authentication_error' : 'invalid_api_key');
      expect(JSON.parse(r.text).error.message).toMatch(/Bearer/);
      expect(gw.calls.findKey, 'store lookups for it').toBe(before);
    },
  );

  it('GET /v1/me: Authorization: <key> without Bearer is 401 too', async () => {
    const res = await fetch(`${gw.url}/v1/me`, { headers: { authorization: key } });
    const text = await res.text();
    expect(res.status, text).toBe(401);
    expect(errorCodeOf(text)).toBe('invalid_api_key');
  });

  const NINE_MIB = 9 * 1024 * 1024;
  it.each([
    ['/v1/chat/completions', 'no key', []],
    ['/v1/chat/completions', 'a malformed key', [['authorization', 'Bearer sk-svc-not-a-key']]],
    ['/anthropic/v1/messages', 'no key', []],
    ['/anthropic/v1/messages', 'a malformed key', [['x-api-key', 'sk-svc-not-a-key']]],
  ] as const)('%s with %s and a 9 MiB body on its way: 401 at once, body unread, connection: close', async (path, _what, auth) => {
    const head = requestBytes(
      'POST',
      path,
      [['content-type', 'application/json'], ['content-length', String(NINE_MIB)], ...auth.map(([k, v]) => [k, v] as [string, string])],
      '{"model":',
    );
    const r = await rawRequest(gw.port, head, { timeoutMs: 4000 });
    expect(r.status, `answer after ${r.ms} ms (timed out: ${r.timedOut})`).toBe(401);
    expect(dialectProblem(dialectOfPath(path), r.body)).toBeNull();
    expect(r.headers.connection).toBe('close');
  });
});

describe("protocol errors answer in the caller's dialect, with connection: close", () => {
  it.each(['/v1/chat/completions', '/anthropic/v1/messages', '/v1/models'])('%s: a 100 KB header is 431', async (path) => {
    const head = requestBytes(
      'POST',
      path,
      [
        ['authorization', `Bearer ${key}`],
        ['x-padding', 'p'.repeat(100 * 1024)],
        ['content-length', '2'],
      ],
      '{}',
    );
    const r = await rawRequest(gw.port, head, { timeoutMs: 4000 });
    expect(r.status, r.body.slice(0, 200)).toBe(431);
    expect(dialectProblem(dialectOfPath(path), r.body)).toBeNull();
    expect(r.headers.connection).toBe('close');
  });

  it.each(['/v1/chat/completions', '/anthropic/v1/messages'])('%s: Content-Length with Transfer-Encoding (a smuggling attempt) is 400', async (path) => {
    const head = requestBytes(
      'POST',
      path,
      [
        ['authorization', `Bearer ${key}`],
        ['content-length', '4'],
        ['transfer-encoding', 'chunked'],
      ],
      '0\r\n\r\n',
    );
    const r = await rawRequest(gw.port, head, { timeoutMs: 4000 });
    expect(r.status, r.body.slice(0, 200)).toBe(400);
    expect(dialectProblem(dialectOfPath(path), r.body)).toBeNull();
    expect(r.headers.connection).toBe('close');
  });
});

describe('internal endpoints', () => {
  it('GET /metrics on the API port is 404 (metrics are served on their own port)', async () => {
    const res = await fetch(`${gw.url}/metrics`);
    const text = await res.text();
    expect(res.status).toBe(404);
    expect(text).not.toContain('svc_gateway_account_balance_usd');
    expect(dialectProblem('openai', text)).toBeNull();
  });
});
