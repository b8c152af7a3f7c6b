// MCP across 3 gateway processes on one Redis: one client session whose requests go round-robin over them (and to
// a process started after one was stopped) keeps working, progress notifications included; money and limits are
// exact across them: N concurrent paid tool calls against a budget for N-1 serve exactly N-1, a failed call costs
// nothing, and the ledger's spend is the sum of the usage events.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { fleetStore, startFleet, type Fleet } from '../helpers/fleet.ts';
import { account, apiKey, mcpServer, plan, secret } from '../helpers/manifests.ts';
import { startSdkServer, type SdkUpstream } from '../helpers/mcp-upstreams.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { keyspaceText } from '../helpers/keyspace.ts';
import { until } from '../helpers/until.ts';
import type { RedisStore } from '../../gateway/state/redis-store.ts';

const TOKEN = 'upstream-credential-fleet-5b19';
const N = 8;
const PRICE_USD = 0.01;
const PRICE_NANO = 10_000_000;
const roaming = apiKey('roaming', 'acme');
const capped = apiKey('capped', 'acme', { monthlyBudgetUsd: (N - 1) * PRICE_USD });
let redis: TestRedis;
let fleet: Fleet;
let store: RedisStore;
let sdk: SdkUpstream;
let docs: object[];

beforeAll(async () => {
  [redis, sdk] = await Promise.all([startRedis('mcp-fleet'), startSdkServer(TOKEN)]);
  store = await fleetStore(redis);
  docs = [
    plan('pro', { tier: 1 }),
    account('acme', 'pro', { credits: [{ id: 'c1', amountUsd: 100 }] }),
    ...roaming.docs,
    ...capped.docs,
    secret('tok', { v: `Bearer ${TOKEN}` }),
    mcpServer('tools', { url: sdk.url, headers: [{ name: 'Authorization', secretKeyRef: { name: 'tok', key: 'v' } }], pricing: { perCallUsd: PRICE_USD } }),
  ];
  fleet = await startFleet(3, redis, docs);
}, 90_000);

afterAll(async () => {
  await store?.close();
  await fleet?.stop();
  await sdk?.close();
  await redis?.stop();
});

/** The SDK client's requests spread over the live processes in turn, as a round-robin Service would. */
function roundRobin(): { fetch: typeof fetch; hits: string[] } {
  let i = 0;
  const hits: string[] = [];
  const f = (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const live = fleet.procs.filter((p) => p.child.exitCode === null && p.child.signalCode === null);
    const base = live[i++ % live.length]?.url as string;
    hits.push(base);
    const u = new URL(input instanceof Request ? input.url : String(input));
    return fetch(`${base}${u.pathname}`, init);
  };
  return { fetch: f as typeof fetch, hits };
}

async function connect(path: string, key: string, rr = roundRobin()): Promise<Client> {
  const client = new Client({ name: 'fleet-client', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${fleet.urls[0]}${path}`), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
    fetch: rr.fetch,
  });
  await client.connect(transport);
  return client;
}

describe('one session over three replicas', () => {
  it.each(['/mcp/tools', '/mcp'])('%s: every request on another process, across a stop and a new process, progress included', async (path) => {
    const rr = roundRobin();
    const client = await connect(path, roaming.key, rr);
    const echo = path === '/mcp' ? 'tools__echo' : 'echo';
    const notify = path === '/mcp' ? 'tools__notify' : 'notify';
    expect((await client.listTools()).tools.map((t) => t.name)).toContain(echo);
    for (let i = 0; i < 3; i++)
      expect((await client.callTool({ name: echo, arguments: { text: `n${i}` } })).content).toEqual([{ type: 'text', text: `n${i}` }]);
    // A process goes away (a rolling restart) and a new one joins: the session goes on.
    const gone = fleet.procs[1];
    await gone?.stop();
    await fleet.add(docs);
    const seen: number[] = [];
    const r = await client.callTool({ name: notify, arguments: {} }, undefined, { onprogress: (p) => seen.push(p.progress) });
    expect(r.content).toEqual([{ type: 'text', text: 'notified' }]);
    expect(seen).toEqual([1, 2, 3]);
    expect((await client.callTool({ name: echo, arguments: { text: 'after' } })).content).toEqual([{ type: 'text', text: 'after' }]);
    expect(new Set(rr.hits).size).toBeGreaterThanOrEqual(3);
    await client.close();
  });
});

async function rawCall(url: string, sid: string, id: number, tool: string): Promise<{ result?: unknown; error?: { code: number; data?: { type?: string } } }> {
  const res = await fetch(`${url}/mcp/tools`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${capped.key}`,
      'mcp-session-id': sid,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: tool, arguments: { text: 'x' } } }),
  });
  const text = await res.text();
  const sse = (res.headers.get('content-type') ?? '').includes('text/event-stream');
  return JSON.parse(
    sse
      ? (text
          .split('\n')
          .filter((l) => l.startsWith('data:'))
          .at(-1)
          ?.slice(5) ?? '{}')
      : text,
  );
}

describe('money and limits across replicas', () => {
  it(`a failed call costs nothing; ${N} concurrent paid calls against a budget for ${N - 1}: exactly ${N - 1} served`, async () => {
    const client = await connect('/mcp/tools', capped.key);
    // The SDK client's session id is the gateway's: used directly by the raw calls below.
    const sid = (client.transport as StreamableHTTPClientTransport).sessionId as string;
    const before = await store.ledger('acme');
    const failed = await rawCall(fleet.urls[0] as string, sid, 100, 'fail');
    expect(failed.result).toMatchObject({ isError: true });
    await until(async () => (await store.ledger('acme')).openHolds === 0, 10_000, 'the failed call settled');
    expect((await store.ledger('acme')).spentNano).toBe(before.spentNano);

    const urls = fleet.procs.filter((p) => p.child.exitCode === null && p.child.signalCode === null).map((p) => p.url);
    const answers = await Promise.all(Array.from({ length: N }, (_, i) => rawCall(urls[i % urls.length] as string, sid, i + 1, 'echo')));
    // Every answer is a result or the budget refusal: anything else (an upstream failure, -32006) is shown whole. The
    // gateway once reused an upstream connection the server was closing and lost a call that way (upstream-idle.test.ts).
    const served = answers.filter((a) => a.result !== undefined);
    const refused = answers.filter((a) => a.error?.code === -32005 && a.error.data?.type === 'budget_exceeded');
    expect({ served: served.length, refused: refused.length }, JSON.stringify(answers)).toEqual({ served: N - 1, refused: 1 });
    await until(async () => (await store.ledger('acme')).openHolds === 0, 10_000, 'every hold settled');
    expect((await store.ledger('acme')).spentNano - before.spentNano).toBe((N - 1) * PRICE_NANO);
    await client.close();
  });
});

describe('secrets at rest', () => {
  it("keeps the McpServer's credential sealed in Redis: found 0 times in the whole keyspace", async () => {
    const { keys, text } = await keyspaceText(store.redis, redis.prefix);
    expect(keys).toBeGreaterThan(0);
    expect(text).toContain('svc-sealed:v1:');
    expect(text.split(TOKEN).length - 1).toBe(0);
  });
});
