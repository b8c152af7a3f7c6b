// The idle TTL (SVC_MCP_SESSION_IDLE_MS, short here): a session with no request for that long has its upstream
// session ended (DELETE, seen at the upstream) and its id answered 404 "session not found", as the SDK client
// expects of an ended session, on /mcp/<server> and /mcp alike.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { account, apiKey, mcpServer, plan, secret } from '../helpers/manifests.ts';
import { startSdkServer, type SdkUpstream } from '../helpers/mcp-upstreams.ts';
import { until } from '../helpers/until.ts';

const TOKEN = 'idle-upstream-credential-77d2';
const IDLE_MS = 1_000;
let sdk: SdkUpstream;
let gw: TestGateway;
const key = apiKey('agent', 'acme');

beforeAll(async () => {
  sdk = await startSdkServer(TOKEN);
  gw = await startGateway(
    [
      plan('pro', { tier: 1 }),
      account('acme', 'pro'),
      ...key.docs,
      secret('tools-token', { authorization: `Bearer ${TOKEN}` }),
      mcpServer('tools', { url: sdk.url, headers: [{ name: 'Authorization', secretKeyRef: { name: 'tools-token', key: 'authorization' } }] }),
    ],
    { mcp: { idleMs: IDLE_MS, allowedOrigins: [] } },
  );
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await sdk?.close();
});

describe.each(['/mcp/tools', '/mcp'])('%s', (path) => {
  it('ends an idle session upstream and refuses its id with 404 after', async () => {
    const client = new Client({ name: 'idle-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${gw.url}${path}`), { requestInit: { headers: { Authorization: `Bearer ${key.key}` } } });
    client.onerror = () => {};
    await client.connect(transport);
    const tool = path === '/mcp' ? 'tools__echo' : 'echo';
    expect((await client.callTool({ name: tool, arguments: { text: 'before' } })).content).toEqual([{ type: 'text', text: 'before' }]);
    const sessionId = transport.sessionId as string;
    expect(sdk.sessions()).toBeGreaterThan(0);
    // Nothing is sent for longer than the TTL: the sweep ends the upstream session.
    await until(() => sdk.sessions() === 0, 60_000, 'the upstream session ended by the idle sweep');
    await expect(client.callTool({ name: tool, arguments: { text: 'after' } })).rejects.toMatchObject({ code: 404 });
    const r = await fetch(`${gw.url}${path}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key.key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': sessionId,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'ping' }),
    });
    expect(r.status).toBe(404);
    expect(((await r.json()) as { error: { code: number } }).error.code).toBe(-32004);
    await client.close().catch(() => {});
  }, 120_000);
});
