// McpServers whose upstream requires an OAuth access token (spec.oauth, the client-credentials grant): a real gateway
// process on a real Redis, a fake token endpoint speaking the real OAuth wire format on loopback, and an SDK upstream
// that accepts only the tokens that endpoint issued and that have not expired. The official SDK client calls tools
// through /mcp/<server>: a token is fetched once and refreshed before it expires (never once per call), concurrent
// first calls share one fetch, a 401 from the upstream drops the token once, and a client secret the endpoint refuses
// answers -32006 naming the server, costs nothing and is then held back (no fetch per call). The client secret and the
// tokens appear in no answer, no line of the gateway's log and nowhere in the Redis keyspace.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { fleetStore, startFleet, type Fleet } from '../helpers/fleet.ts';
import { keyspaceText } from '../helpers/keyspace.ts';
import { account, apiKey, mcpServer, plan, secret } from '../helpers/manifests.ts';
import { startSdkServer, type SdkUpstream } from '../helpers/mcp-upstreams.ts';
import { startIssuer, type Issuer } from '../helpers/oauth-issuer.ts';
import { startRedis, type TestRedis } from '../helpers/redis.ts';
import { until } from '../helpers/until.ts';
import type { RedisStore } from '../../gateway/state/redis-store.ts';

// Characters that client_secret_basic must form-encode before Basic (RFC 6749 appendix B): a gateway that does not
// is refused by the endpoint.
const SECRET = 'cs-7Qe+/=:&% secret-4b1d';
const SHORT_LIFE_S = 3;
const PRICE_NANO = 10_000_000;
const agent = apiKey('agent', 'acme');
let redis: TestRedis;
let issuer: Issuer;
let sdk: SdkUpstream;
let fleet: Fleet;
let store: RedisStore;
/** Every answer body a client received here as text (raw calls), searched for the secret and the tokens. */
const answers: string[] = [];

const oauth = (clientId: string, extra: object = {}): object => ({
  tokenUrl: '',
  clientId,
  clientSecretRef: { name: 'oauth-client', key: 'secret' },
  ...extra,
});

beforeAll(async () => {
  [redis, issuer] = await Promise.all([
    startRedis('mcp-oauth'),
    startIssuer({
      'short client': { secret: SECRET, expiresIn: SHORT_LIFE_S },
      steady: { secret: SECRET, expiresIn: 3600 },
      revoked: { secret: SECRET, expiresIn: 3600 },
      refused: { secret: 'another-secret', expiresIn: 3600 },
    }),
  ]);
  sdk = await startSdkServer((bearer) => issuer.valid(bearer));
  store = await fleetStore(redis);
  const server = (name: string, clientId: string, extra: object = {}): object =>
    mcpServer(name, { url: sdk.url, oauth: { ...oauth(clientId), tokenUrl: issuer.tokenUrl }, ...extra } as never);
  fleet = await startFleet(1, redis, [
    plan('pro', { tier: 1 }),
    account('acme', 'pro', { credits: [{ id: 'c1', amountUsd: 100 }] }),
    ...agent.docs,
    secret('oauth-client', { secret: SECRET }),
    mcpServer('short', {
      url: sdk.url,
      oauth: {
        tokenUrl: issuer.tokenUrl,
        clientId: 'short client',
        clientSecretRef: { name: 'oauth-client', key: 'secret' },
        scopes: ['tools:read', 'tools:call'],
        audience: 'https://tools.example.com',
        resource: sdk.url,
      },
    }),
    server('steady', 'steady'),
    server('revoked', 'revoked'),
    server('refused', 'refused', { pricing: { perCallUsd: PRICE_NANO / 1e9 } }),
  ]);
}, 90_000);

afterAll(async () => {
  await store?.close();
  await fleet?.stop();
  await Promise.all([sdk?.close(), issuer?.close()]);
  await redis?.stop();
});

async function connect(name: string): Promise<Client> {
  const client = new Client({ name: 'oauth-test-client', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${fleet.urls[0]}/mcp/${name}`), {
    requestInit: { headers: { Authorization: `Bearer ${agent.key}` } },
  });
  await client.connect(transport);
  return client;
}

async function echo(client: Client, text: string): Promise<void> {
  const r = await client.callTool({ name: 'echo', arguments: { text } });
  answers.push(JSON.stringify(r));
  expect(r.content).toEqual([{ type: 'text', text }]);
}

/** A raw JSON-RPC POST to /mcp/<name> (no session): its status and JSON body. */
async function raw(name: string, id: number, method: string, params: object): Promise<{ status: number; body: { error?: { code: number; message: string } } }> {
  const res = await fetch(`${fleet.urls[0]}/mcp/${name}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${agent.key}` },
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
  });
  const text = await res.text();
  answers.push(text);
  return { status: res.status, body: JSON.parse(text) };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('an upstream that requires an OAuth client-credentials token', () => {
  it('fetches one token with the real grant, sends it as Bearer, refreshes it before it expires: never one fetch per call', async () => {
    const start = Date.now();
    const client = await connect('short');
    for (let i = 0; i < 4; i++) await echo(client, `first ${i}`);
    const first = issuer.issued.find((t) => t.clientId === 'short client');
    if (!first) throw new Error('no token issued to the gateway');
    // Past the first token's expiry: the upstream refuses it from then on, so every later call needs a new one.
    while (Date.now() <= first.expiresAt + 100) await sleep(100);
    for (let i = 0; i < 4; i++) await echo(client, `later ${i}`);
    await client.close();
    const elapsed = Date.now() - start;

    const fetches = issuer.requestsOf('short client');
    // The grant as RFC 6749 4.4 and RFC 8707 write it (the Basic credentials were checked by the endpoint: 200).
    expect(fetches[0]).toMatchObject({
      contentType: 'application/x-www-form-urlencoded',
      status: 200,
      form: { grant_type: 'client_credentials', scope: 'tools:read tools:call', resource: sdk.url, audience: 'https://tools.example.com' },
    });
    expect(fetches.every((f) => f.status === 200)).toBe(true);
    // One refresh at least (the first token expired), and no more than one per half-life of a token, however many calls.
    expect(fetches.length).toBeGreaterThanOrEqual(2);
    expect(fetches.length).toBeLessThanOrEqual(2 + Math.floor(elapsed / ((SHORT_LIFE_S * 1000) / 2)));
    const used = new Set(sdk.authorizations.filter((a) => issuer.issued.some((t) => t.clientId === 'short client' && a === `Bearer ${t.token}`)));
    expect(used.size).toBeGreaterThanOrEqual(2);
    // Every upstream request of this server carried a token (initialize, notifications, 8 calls, the DELETE).
    expect(sdk.authorizations.filter((a) => [...used].includes(a)).length).toBeGreaterThanOrEqual(10);
    expect(fetches.length).toBeLessThan(10 / 2);
  });

  it('concurrent first calls share one fetch of the token', async () => {
    const clients = await Promise.all(Array.from({ length: 6 }, () => connect('steady')));
    await Promise.all(clients.map((c, i) => echo(c, `together ${i}`)));
    await Promise.all(clients.map((c) => c.close()));
    expect(issuer.requestsOf('steady').length).toBe(1);
  });

  it('a 401 from the upstream drops the token once: the next call fetches a new one, later calls use it', async () => {
    const client = await connect('revoked');
    await echo(client, 'before');
    expect(issuer.requestsOf('revoked').length).toBe(1);
    issuer.revoke('revoked');
    // The upstream refuses the revoked token: that call fails (an upstream failure) and drops it.
    await expect(client.callTool({ name: 'echo', arguments: { text: 'refused' } })).rejects.toThrow(
      /McpServer revoked refused the gateway's credential \(HTTP 401\)/,
    );
    await echo(client, 'after');
    for (let i = 0; i < 3; i++) await echo(client, `after ${i}`);
    expect(issuer.requestsOf('revoked').length).toBe(2);
    await client.close();
  });

  it('a secret the token endpoint refuses: -32006 naming the server, nothing charged, then held back (no fetch per call)', async () => {
    const before = await store.ledger('acme');
    const start = Date.now();
    const first = await raw('refused', 1, 'tools/call', { name: 'echo', arguments: { text: 'x' } });
    expect(first.status).toBe(502);
    expect(first.body.error?.code).toBe(-32006);
    expect(first.body.error?.message).toContain('McpServer refused could not obtain an OAuth token');
    expect(first.body.error?.message).toContain('401 invalid_client');
    expect(issuer.requestsOf('refused').map((r) => r.status)).toEqual([401]);
    for (let i = 2; i <= 6; i++) {
      const again = await raw('refused', i, i % 2 ? 'initialize' : 'tools/call', i % 2 ? {} : { name: 'echo', arguments: {} });
      expect(again.status).toBe(502);
      expect(again.body.error?.code).toBe(-32006);
      expect(again.body.error?.message).toContain('could not obtain an OAuth token');
    }
    // The back-off holds 5 s after the first failure (then 10, 20...): at most one fetch per 5 s, not one per call.
    expect(issuer.requestsOf('refused').length).toBeLessThanOrEqual(1 + Math.floor((Date.now() - start) / 5000));
    await until(async () => (await store.ledger('acme')).openHolds === 0, 10_000, 'every hold released');
    expect((await store.ledger('acme')).spentNano).toBe(before.spentNano);
  });

  it('the client secret and the tokens appear in no answer, no log line and nowhere in Redis', async () => {
    const tokens = issuer.issued.map((t) => t.token);
    expect(tokens.length).toBeGreaterThanOrEqual(4);
    const log = fleet.procs.map((p) => p.output()).join('\n');
    expect(log.length).toBeGreaterThan(0);
    const { keys, text } = await keyspaceText(store.redis, redis.prefix);
    expect(keys).toBeGreaterThan(0);
    expect(text).toContain('svc-sealed:v1:');
    for (const [where, s] of [
      ['answers', answers.join('\n')],
      ['log', log],
      ['redis', text],
    ] as const) {
      expect(s.includes(SECRET), `secret in ${where}`).toBe(false);
      expect(s.includes(encodeURIComponent(SECRET)), `encoded secret in ${where}`).toBe(false);
      for (const t of tokens) expect(s.includes(t), `a token in ${where}`).toBe(false);
    }
  });
});
