// Browsers on /mcp: the origins of SVC_MCP_ALLOWED_ORIGINS pass (their preflight answered without a key, the
// session id exposed to their pages), every other Origin is refused (DNS-rebinding protection), and a request
// without Origin (an SDK, Claude Code) gets no CORS headers at all.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { account, apiKey, mcpServer, plan } from '../helpers/manifests.ts';

const APP = 'http://app.example:3000';
let gw: TestGateway;
const key = apiKey('agent', 'acme');
const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'page', version: '1' } },
};

beforeAll(async () => {
  gw = await startGateway([plan('pro', { tier: 1 }), account('acme', 'pro'), ...key.docs, mcpServer('demo', { mock: {} })], {
    mcp: { idleMs: 0, allowedOrigins: [APP] },
  });
}, 60_000);

afterAll(async () => {
  await gw?.close();
});

const preflight = (path: string, origin: string): Promise<Response> =>
  fetch(`${gw.url}${path}`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, mcp-session-id' },
  });

const init = (path: string, headers: Record<string, string>): Promise<Response> =>
  fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(INIT),
  });

describe('an allowed origin', () => {
  it.each(['/mcp', '/mcp/demo'])('%s: answers its preflight without a key, allowing the MCP headers', async (path) => {
    const r = await preflight(path, APP);
    expect(r.status).toBe(204);
    expect(r.headers.get('access-control-allow-origin')).toBe(APP);
    expect(r.headers.get('access-control-allow-methods')).toContain('DELETE');
    expect(r.headers.get('access-control-allow-headers')).toContain('mcp-session-id');
    expect(r.headers.get('access-control-allow-headers')).toContain('authorization');
  });

  it('exposes the session id to the page', async () => {
    const r = await init('/mcp', { origin: APP });
    expect(r.status).toBe(200);
    expect(r.headers.get('mcp-session-id')).toMatch(/^svcmcp1\./);
    expect(r.headers.get('access-control-allow-origin')).toBe(APP);
    expect(r.headers.get('access-control-expose-headers')).toContain('mcp-session-id');
  });

  it('serves the SDK client sending that Origin', async () => {
    const client = new Client({ name: 'browser-like', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key.key}`, Origin: APP } } }),
    );
    expect((await client.callTool({ name: 'demo__add', arguments: { a: 2, b: 3 } })).content).toEqual([{ type: 'text', text: '5' }]);
    await client.close();
  });
});

describe('any other origin', () => {
  it.each(['http://evil.example', 'http://app.example:3001', 'https://app.example:3000', 'null'])('refuses %s, preflight included', async (origin) => {
    const p = await preflight('/mcp', origin);
    expect(p.status).toBe(403);
    expect(p.headers.get('access-control-allow-origin')).toBeNull();
    const r = await init('/mcp', { origin });
    expect(r.status).toBe(403);
    expect(((await r.json()) as { error: { code: number; message: string } }).error).toMatchObject({ code: -32003 });
  });
});

describe('no Origin', () => {
  it('gets no CORS headers on /mcp, while the model API keeps its own', async () => {
    const r = await init('/mcp', {});
    expect(r.status).toBe(200);
    expect(r.headers.get('access-control-allow-origin')).toBeNull();
    const v1 = await fetch(`${gw.url}/v1/models`, { method: 'OPTIONS', headers: { origin: 'http://any.example' } });
    expect(v1.status).toBe(204);
    expect(v1.headers.get('access-control-allow-origin')).toBe('*');
  });
});
