// The official MCP TypeScript SDK client through the gateway to real servers: server-everything (the reference
// server) and an SDK server that demands its own credential. /mcp/<server> with the server's names, /mcp with
// every allowed server's tools as <prefix>__<tool>; the upstream credential injected, never seen by the client.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { account, apiKey, mcpServer, plan, secret } from '../helpers/manifests.ts';
import { startEverything, startSdkServer, type SdkUpstream, type Upstream } from '../helpers/mcp-upstreams.ts';

const UPSTREAM_TOKEN = 'upstream-credential-8f3a1c';
let everything: Upstream & { output: () => string };
let sdk: SdkUpstream;
let gw: TestGateway;
const key = apiKey('agent', 'acme');

async function connect(path: string, k = key.key): Promise<Client> {
  const client = new Client({ name: 'test-client', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${gw.url}${path}`), { requestInit: { headers: { Authorization: `Bearer ${k}` } } });
  await client.connect(transport);
  return client;
}

beforeAll(async () => {
  [everything, sdk] = await Promise.all([startEverything(), startSdkServer(UPSTREAM_TOKEN)]);
  gw = await startGateway([
    plan('pro', { tier: 1 }),
    account('acme', 'pro'),
    ...key.docs,
    secret('tools-token', { authorization: `Bearer ${UPSTREAM_TOKEN}` }),
    mcpServer('everything', { url: everything.url }),
    mcpServer('tools', {
      url: sdk.url,
      prefix: 'sdk',
      headers: [{ name: 'Authorization', secretKeyRef: { name: 'tools-token', key: 'authorization' } }],
      tools: { exclude: ['admin_*'] },
    }),
  ]);
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await Promise.all([everything?.close(), sdk?.close()]);
});

describe('/mcp/<server>', () => {
  it('serves server-everything to the SDK client: tools listed and called with their own names', async () => {
    const client = await connect('/mcp/everything');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('echo');
    const r = await client.callTool({ name: 'echo', arguments: { message: 'through the gateway' } });
    expect(JSON.stringify(r.content)).toContain('through the gateway');
    await client.close();
  });

  it("injects the upstream's credential from its Secret, never the client's key", async () => {
    const client = await connect('/mcp/tools');
    const r = await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
    expect(r.content).toEqual([{ type: 'text', text: 'hi' }]);
    await client.close();
    expect(sdk.authorizations.length).toBeGreaterThan(0);
    expect(new Set(sdk.authorizations)).toEqual(new Set([`Bearer ${UPSTREAM_TOKEN}`]));
  });

  it('hides excluded tools from tools/list and refuses a call to one as an unknown tool', async () => {
    const client = await connect('/mcp/tools');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['echo', 'fail', 'grow', 'notify', 'slow']);
    const before = sdk.calls.length;
    await expect(client.callTool({ name: 'admin_delete', arguments: {} })).rejects.toThrow(/Unknown tool: admin_delete/);
    expect(sdk.calls.length).toBe(before);
    await client.close();
  });

  it('passes progress notifications of a streamed answer to the client', async () => {
    const client = await connect('/mcp/tools');
    const seen: number[] = [];
    const r = await client.callTool({ name: 'notify', arguments: {} }, undefined, { onprogress: (p) => seen.push(p.progress) });
    expect(r.content).toEqual([{ type: 'text', text: 'notified' }]);
    expect(seen).toEqual([1, 2, 3]);
    await client.close();
  });
});

describe('/mcp', () => {
  it('lists every allowed server’s tools as <prefix>__<tool> and routes a call by its prefix', async () => {
    const client = await connect('/mcp');
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain('everything__echo');
    expect(names).toContain('sdk__echo');
    expect(names).not.toContain('sdk__admin_delete');
    const a = await client.callTool({ name: 'sdk__echo', arguments: { text: 'one' } });
    expect(a.content).toEqual([{ type: 'text', text: 'one' }]);
    const b = await client.callTool({ name: 'everything__echo', arguments: { message: 'two' } });
    expect(JSON.stringify(b.content)).toContain('two');
    await expect(client.callTool({ name: 'sdk__admin_delete', arguments: {} })).rejects.toThrow(/Unknown tool/);
    await client.close();
  });

  it('records one usage event per tools/call (endpoint mcp, <server>/<tool>, the McpServer as upstream)', async () => {
    const before = gw.sink.events.length;
    const client = await connect('/mcp');
    await client.callTool({ name: 'sdk__echo', arguments: { text: 'x' } });
    await client.close();
    const events = gw.sink.events.slice(before).filter((e) => e.endpoint === 'mcp');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      endpoint: 'mcp',
      requestedModel: 'mcp:tools/echo',
      servedModel: 'mcp:tools/echo',
      upstream: 'tools',
      status: 200,
      costNano: 0,
    });
  });
});
