// An upstream with only the legacy HTTP+SSE transport (the official SDK's SSEServerTransport) behind an McpServer
// with transport sse, served to the official SDK client over Streamable HTTP on /mcp/<server> and /mcp: tools
// listed and called (progress included), a priced call charged exactly, the server's sampling request refused, a
// client that leaves closes the upstream stream, an upstream that fails is a -32006 error, and one session goes on
// across two gateway processes on one Redis (each request replays initialize upstream: nothing is kept by a process).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseAllDocuments } from 'yaml';
import { probeMcpServer } from '../../gateway/availability/mcp-probe.ts';
import { docExample } from '../helpers/docs.ts';
import { startFleet, type Fleet } from '../helpers/fleet.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { freePort } from '../helpers/host.ts';
import { account, apiKey, mcpServer, plan, secret } from '../helpers/manifests.ts';
import { startLegacyUpstream, type LegacyUpstream } from '../helpers/mcp-legacy-upstream.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { until } from '../helpers/until.ts';

const TOKEN = 'legacy-upstream-credential-6d2e';
const PRICE_USD = 0.0125;
const PRICE_NANO = 12_500_000;
const key = apiKey('agent', 'acme');
let up: LegacyUpstream;
let gw: TestGateway;
/** An upstream that opens its SSE stream and never names its endpoint. */
let mute: Server;
let muteOpen = 0;
let docs: object[];

beforeAll(async () => {
  up = await startLegacyUpstream(TOKEN);
  mute = createServer((_req, res) => {
    muteOpen++;
    res.on('close', () => muteOpen--);
    res.writeHead(200, { 'content-type': 'text/event-stream' }).write(': nothing to say\n\n');
  });
  await new Promise<void>((r) => mute.listen(0, '127.0.0.1', r));
  docs = [
    plan('pro', { tier: 1 }),
    account('acme', 'pro', { credits: [{ id: 'c1', amountUsd: 10 }] }),
    ...key.docs,
    secret('legacy-token', { authorization: `Bearer ${TOKEN}` }),
    mcpServer('legacy', {
      url: up.url,
      transport: 'sse',
      headers: [{ name: 'Authorization', secretKeyRef: { name: 'legacy-token', key: 'authorization' } }],
      pricing: { tools: [{ name: 'echo', perCallUsd: PRICE_USD }] },
    }),
    mcpServer('gone', { url: `http://127.0.0.1:${await freePort()}/sse`, transport: 'sse', pricing: { perCallUsd: PRICE_USD } }),
    mcpServer('nocred', { url: up.url, transport: 'sse' }),
    mcpServer('mute', { url: `http://127.0.0.1:${(mute.address() as AddressInfo).port}/sse`, transport: 'sse', timeouts: { firstByteMs: 300 } }),
  ];
  gw = await startGateway(docs);
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await up?.close();
  mute?.closeAllConnections();
  await new Promise((r) => mute?.close(r));
});

function initialize(path: string): Promise<Response> {
  return fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${key.key}` },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    }),
  });
}

async function connect(base: string, path: string, fetchFn?: typeof fetch, sampling = false): Promise<Client> {
  const client = new Client({ name: 'legacy-test-client', version: '1.0.0' }, sampling ? { capabilities: { sampling: {} } } : {});
  const transport = new StreamableHTTPClientTransport(new URL(`${base}${path}`), {
    requestInit: { headers: { Authorization: `Bearer ${key.key}` } },
    ...(fetchFn ? { fetch: fetchFn } : {}),
  });
  await client.connect(transport);
  return client;
}

describe('/mcp/<server> on a legacy HTTP+SSE upstream', () => {
  it('initialize, tools/list and tools/call with progress; each request replays initialize upstream and closes its stream', async () => {
    const before = up.initializes();
    const client = await connect(gw.url, '/mcp/legacy');
    expect(client.getServerVersion()?.name).toBe('legacy-sse-upstream');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['ask', 'echo', 'notify', 'slow']);
    const seen: number[] = [];
    const r = await client.callTool({ name: 'notify', arguments: {} }, undefined, { onprogress: (p) => seen.push(p.progress) });
    expect(r.content).toEqual([{ type: 'text', text: 'notified' }]);
    expect(seen).toEqual([1, 2, 3]);
    // initialize, tools/list, tools/call: one initialize upstream each; no stream left open between requests.
    expect(up.initializes() - before).toBe(3);
    await until(() => up.openStreams() === 0, 30_000, 'upstream streams closed');
    await client.close();
  });

  it('a priced tools/call is one usage event with its exact cost, settled against the balance', async () => {
    const client = await connect(gw.url, '/mcp/legacy');
    const before = gw.sink.events.length;
    const spent = (await gw.store.ledger('acme')).spentNano;
    const r = await client.callTool({ name: 'echo', arguments: { text: 'paid' } });
    expect(r.content).toEqual([{ type: 'text', text: 'paid' }]);
    await until(() => gw.sink.events.length > before, 30_000, 'the usage event');
    const events = gw.sink.events.slice(before).filter((e) => e.endpoint === 'mcp');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ requestedModel: 'mcp:legacy/echo', upstream: 'legacy', status: 200, costNano: PRICE_NANO });
    expect((await gw.store.ledger('acme')).spentNano - spent).toBe(PRICE_NANO);
    await client.close();
  });

  it("refuses the server's own requests: the client is never asked, the server gets a clear error", async () => {
    const client = await connect(gw.url, '/mcp/legacy', undefined, true);
    let sampled = false;
    client.setRequestHandler((await import('@modelcontextprotocol/sdk/types.js')).CreateMessageRequestSchema, async () => {
      sampled = true;
      return { role: 'assistant', content: { type: 'text', text: 'x' }, model: 'm' };
    });
    const r = await client.callTool({ name: 'ask', arguments: {} });
    expect(r.content).toEqual([{ type: 'text', text: 'asked' }]);
    expect(sampled).toBe(false);
    // The SDK server sends it anyway: the gateway answers it upstream with a clear refusal.
    expect(up.asked.at(-1)).toMatch(/-32601.*does not pass the requests of a legacy HTTP\+SSE server/);
    await client.close();
  });

  it('a client that leaves mid-call closes the upstream SSE stream and releases its hold', async () => {
    const init = await fetch(`${gw.url}/mcp/legacy`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${key.key}` },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      }),
    });
    await init.text();
    const sid = init.headers.get('mcp-session-id') as string;
    expect(sid).toBeTruthy();
    const calls = up.calls.length;
    const ctrl = new AbortController();
    const pending = fetch(`${gw.url}/mcp/legacy`, {
      method: 'POST',
      signal: ctrl.signal,
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${key.key}`,
        'mcp-session-id': sid,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'slow', arguments: {} } }),
    }).then((r) => r.text());
    await until(() => up.calls.length > calls && up.openStreams() > 0, 30_000, 'the call reached the upstream');
    ctrl.abort();
    await pending.catch(() => undefined);
    await until(() => up.openStreams() === 0, 30_000, 'upstream stream closed after the client left');
    await until(async () => (await gw.store.ledger('acme')).openHolds === 0, 30_000, 'holds released');
  });

  it('an upstream that cannot be reached: -32006 naming the McpServer, nothing charged', async () => {
    const res = await fetch(`${gw.url}/mcp/gone`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${key.key}` },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      }),
    });
    expect(res.status).toBe(502);
    const body = (await res.json()) as { error: { code: number; message: string } };
    expect(body.error.code).toBe(-32006);
    expect(body.error.message).toContain('McpServer gone');
    expect(body.error.message).not.toContain('127.0.0.1');
  });

  it('a priced tools/call to an upstream that cannot be reached costs nothing: one usage event, upstream_error', async () => {
    const spent = (await gw.store.ledger('acme')).spentNano;
    const before = gw.sink.events.length;
    const res = await fetch(`${gw.url}/mcp/gone`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${key.key}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' } } }),
    });
    expect(res.status).toBe(502);
    expect(((await res.json()) as { error: { code: number } }).error.code).toBe(-32006);
    await until(() => gw.sink.events.length > before, 30_000, 'the usage event');
    expect(gw.sink.events.at(-1)).toMatchObject({ requestedModel: 'mcp:gone/echo', costNano: 0, errorCode: 'upstream_error' });
    const ledger = await gw.store.ledger('acme');
    expect(ledger.spentNano).toBe(spent);
    expect(ledger.openHolds).toBe(0);
  });

  it("an upstream that refuses the gateway's credential: -32006 saying so", async () => {
    const res = await initialize('/mcp/nocred');
    expect(res.status).toBe(502);
    const body = (await res.json()) as { error: { code: number; message: string } };
    expect(body.error).toMatchObject({ code: -32006 });
    expect(body.error.message).toContain("McpServer nocred refused the gateway's credential (HTTP 401");
  });

  it('an upstream that never names its endpoint: -32006 timed out (504) after firstByteMs, its stream closed', async () => {
    const res = await initialize('/mcp/mute');
    expect(res.status).toBe(504);
    expect(((await res.json()) as { error: { code: number; message: string } }).error).toMatchObject({ code: -32006, message: 'McpServer mute timed out.' });
    await until(() => muteOpen === 0, 30_000, 'the mute stream closed');
  });

  it('the availability probe (initialize, initialized, ping) passes on a legacy upstream', async () => {
    const server = gw.snapshot.mcpServers?.legacy;
    if (!server) throw new Error('no legacy server');
    const r = await probeMcpServer(server, Date.now());
    expect(r).toMatchObject({ ok: true, status: 200 });
    await until(() => up.openStreams() === 0, 30_000, 'upstream streams closed');
  });
});

describe('/mcp with a legacy upstream', () => {
  it('lists and calls its tools as legacy__<tool>; the unreachable server is left out', async () => {
    const client = await connect(gw.url, '/mcp');
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['legacy__echo', 'legacy__notify']));
    expect(names.some((n) => n.startsWith('gone__'))).toBe(false);
    const r = await client.callTool({ name: 'legacy__echo', arguments: { text: 'through /mcp' } });
    expect(r.content).toEqual([{ type: 'text', text: 'through /mcp' }]);
    await client.close();
    await until(() => up.openStreams() === 0, 30_000, 'upstream streams closed');
  });
});

describe('one session over two gateway processes on one Redis', () => {
  let redis: TestRedis;
  let fleet: Fleet;

  beforeAll(async () => {
    redis = await startRedis('mcp-legacy');
    fleet = await startFleet(2, redis, docs);
  }, 120_000);

  afterAll(async () => {
    await fleet?.stop();
    await redis?.stop();
  });

  it('each request on the other process: the session holds all a process needs', async () => {
    let i = 0;
    const hits: string[] = [];
    const rr = ((input: string | URL | Request, init?: RequestInit): Promise<Response> => {
      const base = fleet.urls[i++ % fleet.urls.length] as string;
      hits.push(base);
      const u = new URL(input instanceof Request ? input.url : String(input));
      return fetch(`${base}${u.pathname}`, init);
    }) as typeof fetch;
    const client = await connect(fleet.urls[0] as string, '/mcp/legacy', rr);
    for (let n = 0; n < 3; n++)
      expect((await client.callTool({ name: 'echo', arguments: { text: `n${n}` } })).content).toEqual([{ type: 'text', text: `n${n}` }]);
    expect(new Set(hits).size).toBe(2);
    await client.close();
  });
});

describe('docs/mcp.md: the legacy HTTP+SSE McpServer as written', () => {
  it('is served (its URL and token swapped for the test upstream): tools listed and a call charged at its price', async () => {
    const example = parseAllDocuments(docExample('docs/mcp.md', 'mcp-legacy-sse')).map((d) => d.toJS() as Record<string, Record<string, unknown>>);
    const [sec, server] = example as [Record<string, Record<string, unknown>>, Record<string, Record<string, unknown>>];
    expect(server.spec).toMatchObject({ transport: 'sse', pricing: { perCallUsd: 0.002 } });
    sec.stringData = { authorization: `Bearer ${TOKEN}` };
    server.spec = { ...server.spec, url: up.url };
    const own = await startGateway([plan('pro', { tier: 1 }), account('acme', 'pro', { credits: [{ id: 'c1', amountUsd: 10 }] }), ...key.docs, sec, server]);
    try {
      expect(own.snapshot.mcpServers?.['legacy-tools']).toMatchObject({ transport: 'sse', perCallNano: 2_000_000 });
      const client = await connect(own.url, '/mcp/legacy-tools');
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('echo');
      const before = own.sink.events.length;
      expect((await client.callTool({ name: 'echo', arguments: { text: 'doc' } })).content).toEqual([{ type: 'text', text: 'doc' }]);
      await until(() => own.sink.events.length > before, 30_000, 'the usage event');
      expect(own.sink.events.at(-1)).toMatchObject({ requestedModel: 'mcp:legacy-tools/echo', costNano: 2_000_000 });
      await client.close();
    } finally {
      await own.close();
    }
  });
});
