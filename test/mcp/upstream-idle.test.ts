// The gateway keeps an idle connection to an upstream MCP server for less time than the server does. Node.js servers
// (most MCP servers, the official SDKs' included) close an idle connection after 5 s and do not say so on their SSE
// answers; a connection the gateway kept longer was sometimes reused just as the server closed it, and the call failed
// at the socket (ECONNRESET, "other side closed", a -32006 to the client) with nothing wrong upstream: under load, the
// 3-replica money test saw one of its N-1 admitted paid calls fail that way. Here the server keeps connections 10 s,
// so a connection idle for 6 s is still open at the server: the gateway must open a new one all the same.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UPSTREAM_IDLE_MS } from '../../gateway/mcp/upstream.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { account, apiKey, mcpServer, plan, secret } from '../helpers/manifests.ts';
import { startSdkServer, type SdkUpstream } from '../helpers/mcp-upstreams.ts';

const TOKEN = 'upstream-credential-idle-2c7e';
const key = apiKey('idle', 'acme');
let sdk: SdkUpstream;
let gw: TestGateway;

beforeAll(async () => {
  sdk = await startSdkServer(TOKEN, { keepAliveMs: 10_000 });
  gw = await startGateway([
    plan('pro', { tier: 1 }),
    account('acme', 'pro'),
    ...key.docs,
    secret('tok', { v: `Bearer ${TOKEN}` }),
    mcpServer('tools', { url: sdk.url, headers: [{ name: 'Authorization', secretKeyRef: { name: 'tok', key: 'v' } }] }),
  ]);
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await sdk?.close();
});

describe('idle upstream connections', () => {
  it('are not reused once idle for longer than a Node.js server keeps them', async () => {
    expect(UPSTREAM_IDLE_MS).toBeLessThan(5_000);
    const client = new Client({ name: 'idle-client', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp/tools`), { requestInit: { headers: { Authorization: `Bearer ${key.key}` } } }),
    );
    expect((await client.callTool({ name: 'echo', arguments: { text: 'one' } })).content).toEqual([{ type: 'text', text: 'one' }]);
    // Idle past the gateway's limit (and past Node's 5 s), not yet past this server's 10 s: a pause, not a bound.
    await new Promise((r) => setTimeout(r, UPSTREAM_IDLE_MS + 2_000));
    const before = sdk.connections();
    expect((await client.callTool({ name: 'echo', arguments: { text: 'two' } })).content).toEqual([{ type: 'text', text: 'two' }]);
    expect(sdk.connections()).toBeGreaterThan(before);
    await client.close();
  }, 60_000);
});
