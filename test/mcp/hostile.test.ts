// Hostile and broken input on /mcp and /mcp/<server>: clear JSON-RPC errors with the right HTTP status, never a
// 5xx of the gateway's own, a session of another key unknown, an upstream that never answers cut at its timeout
// and charged nothing, a client that leaves leaving nothing open upstream, the upstream credential in no answer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { account, apiKey, mcpServer, plan, secret } from '../helpers/manifests.ts';
import { startSdkServer, type SdkUpstream } from '../helpers/mcp-upstreams.ts';
import { until } from '../helpers/until.ts';

const TOKEN = 'upstream-credential-hostile-77e2';
const alice = apiKey('alice', 'acme');
const bob = apiKey('bob', 'acme');
const narrow = apiKey('narrow', 'acme', { mcp: { servers: ['mock'] } });
let sdk: SdkUpstream;
let gw: TestGateway;
/** Every answer's status line, headers and body: the credential must be in none. */
const seen: string[] = [];

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
};

async function post(
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
  key: string | null = alice.key,
): Promise<{ status: number; headers: Headers; json: { error?: { code: number; message: string }; result?: unknown } }> {
  const res = await fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  seen.push(`${res.status} ${JSON.stringify([...res.headers])} ${text}`);
  // An SSE answer: its last message is the response.
  const sse = (res.headers.get('content-type') ?? '').includes('text/event-stream');
  const data = sse
    ? (text
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .at(-1)
        ?.slice(5) ?? '{}')
    : text || '{}';
  return { status: res.status, headers: res.headers, json: JSON.parse(data) };
}

async function session(path: string, key = alice.key): Promise<string> {
  const r = await post(path, INIT, {}, key);
  expect(r.status).toBe(200);
  const id = r.headers.get('mcp-session-id');
  if (!id) throw new Error('no session id');
  await post(path, { jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-session-id': id }, key);
  return id;
}

beforeAll(async () => {
  sdk = await startSdkServer(TOKEN);
  gw = await startGateway([
    plan('pro', { tier: 1 }),
    account('acme', 'pro'),
    ...alice.docs,
    ...bob.docs,
    ...narrow.docs,
    secret('tok', { v: `Bearer ${TOKEN}` }),
    mcpServer('tools', {
      url: sdk.url,
      headers: [{ name: 'Authorization', secretKeyRef: { name: 'tok', key: 'v' } }],
      timeouts: { totalMs: 1000 },
      pricing: { perCallUsd: 0.5 },
    }),
    mcpServer('mock', { mock: {} }),
  ]);
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await sdk?.close();
});

describe('authentication', () => {
  it.each([
    ['no key', null],
    ['a malformed key', 'sk-svc-nope'],
    ['an unknown key', 'sk-svc-0000000000000000000000000000000000000A'],
  ])('%s: 401, a JSON-RPC error and a plain Bearer challenge (no OAuth metadata)', async (_n, key) => {
    const r = await post('/mcp', INIT, {}, key);
    expect(r.status).toBe(401);
    expect(r.headers.get('www-authenticate')).toBe('Bearer');
    expect(r.json.error?.code).toBe(-32001);
    const meta = await fetch(`${gw.url}/.well-known/oauth-protected-resource`);
    expect(meta.status).toBe(404);
  });

  it('refuses a request with an Origin (DNS rebinding) with 403', async () => {
    const r = await post('/mcp/mock', INIT, { origin: 'http://evil.example' });
    expect(r.status).toBe(403);
    expect(r.json.error?.message).toContain('DNS-rebinding');
  });
});

describe('malformed JSON-RPC', () => {
  it.each<[string, unknown, number, number]>([
    ['not JSON', '{"jsonrpc":', 400, -32700],
    ['a batch', [INIT, INIT], 400, -32600],
    ['no jsonrpc field', { id: 1, method: 'ping' }, 400, -32600],
    ['a number', 42, 400, -32600],
    ['params not an object', { jsonrpc: '2.0', id: 1, method: 'tools/list', params: [1] }, 400, -32600],
    ['an object id', { jsonrpc: '2.0', id: { a: 1 }, method: 'ping' }, 400, -32600],
  ])('%s: HTTP %s with code %s', async (_n, body, status, code) => {
    for (const path of ['/mcp', '/mcp/mock']) {
      const r = await post(path, body);
      expect(r.status).toBe(status);
      expect(r.json.error?.code).toBe(code);
    }
  });

  it('refuses an oversized body with 413 and a JSON-RPC error', async () => {
    const r = await post('/mcp/mock', {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'echo', arguments: { text: 'x'.repeat(5 * 1024 * 1024) } },
    });
    expect(r.status).toBe(413);
    expect(r.json.error?.code).toBe(-32600);
  });

  it('answers an unknown method with -32601 on /mcp and passes the upstream’s on /mcp/<server>', async () => {
    const agg = await session('/mcp');
    expect((await post('/mcp', { jsonrpc: '2.0', id: 2, method: 'nope/nope' }, { 'mcp-session-id': agg })).json.error?.code).toBe(-32601);
    expect((await post('/mcp/mock', { jsonrpc: '2.0', id: 2, method: 'nope/nope' })).json.error?.code).toBe(-32601);
  });

  it('answers an unknown McpServer with 404, and one the key may not use with 403', async () => {
    expect((await post('/mcp/nowhere', INIT)).status).toBe(404);
    expect((await post('/mcp/tools', INIT, {}, narrow.key)).status).toBe(403);
  });
});

describe('sessions', () => {
  it('treats an unknown or forged session id as unknown (404)', async () => {
    for (const sid of ['nope', 'svcmcp1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'svcmcp1.' + 'x'.repeat(9000)]) {
      const r = await post('/mcp', { jsonrpc: '2.0', id: 3, method: 'tools/list' }, { 'mcp-session-id': sid });
      expect(r.status).toBe(404);
      expect(r.json.error?.code).toBe(-32004);
    }
  });

  it("does not open another key's session, even of the same account", async () => {
    for (const path of ['/mcp', '/mcp/tools']) {
      const sid = await session(path, alice.key);
      expect((await post(path, { jsonrpc: '2.0', id: 4, method: 'tools/list' }, { 'mcp-session-id': sid }, alice.key)).status).toBe(200);
      const r = await post(path, { jsonrpc: '2.0', id: 4, method: 'tools/list' }, { 'mcp-session-id': sid }, bob.key);
      expect(r.status).toBe(404);
    }
  });
});

describe('an upstream that never answers, a client that leaves', () => {
  it('cuts a call at the McpServer totalMs with a JSON-RPC error (504), charges nothing, leaves nothing open', async () => {
    const sid = await session('/mcp/tools');
    const before = await gw.store.ledger('acme');
    const r = await post('/mcp/tools', { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'slow', arguments: {} } }, { 'mcp-session-id': sid });
    // The upstream's stream had started: the answer's last event is the error.
    expect(r.status).toBe(200);
    expect(r.json.error?.code).toBe(-32006);
    expect(r.json.error?.message).toContain('McpServer tools stopped answering');
    await until(() => sdk.open() === 0, 10_000, 'upstream requests closed');
    const after = await gw.store.ledger('acme');
    expect(after.spentNano).toBe(before.spentNano);
    await until(async () => (await gw.store.ledger('acme')).openHolds === 0, 5000, 'holds released');
  });

  it('aborts the upstream request when the client leaves mid-call', async () => {
    const sid = await session('/mcp/tools');
    const ctrl = new AbortController();
    const pending = fetch(`${gw.url}/mcp/tools`, {
      method: 'POST',
      signal: ctrl.signal,
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${alice.key}`,
        'mcp-session-id': sid,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'slow', arguments: {} } }),
    }).then((r) => r.text());
    await until(() => sdk.open() > 0, 5000, 'the call reached the upstream');
    ctrl.abort();
    await pending.catch(() => undefined);
    await until(() => sdk.open() === 0, 5000, 'upstream request closed after the client left');
    await until(async () => (await gw.store.ledger('acme')).openHolds === 0, 5000, 'holds released');
  });
});

describe('secrets', () => {
  it('never shows the upstream credential in any answer', () => {
    expect(seen.length).toBeGreaterThan(10);
    for (const s of seen) expect(s).not.toContain(TOKEN);
  });
});
