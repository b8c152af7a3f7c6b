// Guardrails on MCP tool calls through the gateway, with the official MCP SDK client and an SDK server upstream: a
// Guardrail that lists the `mcp` endpoint checks a tools/call's arguments (a secret blocked with a JSON-RPC error
// naming the guardrail, no upstream call, nothing charged; an email masked before the McpServer sees it) and the
// tool's result (a card blocked as an isError result naming the guardrail); a Guardrail without `mcp` leaves tool
// calls alone. Every match a fact on the call's usage event, never the matched text.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { account, apiKey, mcpServer, plan, secret } from '../helpers/manifests.ts';
import { startSdkServer, type SdkUpstream } from '../helpers/mcp-upstreams.ts';
import { docExample } from '../helpers/docs.ts';
import { parse } from 'yaml';

const API = 'gateway.svc.dev/v1alpha1';
const UPSTREAM_TOKEN = 'upstream-credential-guard';
const AWS_KEY = 'AKIAZ7Q3XKQ4PLMNB2WE';
const EMAIL = 'jane.doe@example.com';
const CARD = '4111 1111 1111 1111';
const HOST_IP = '203.0.113.7';
let sdk: SdkUpstream;
let gw: TestGateway;
const key = apiKey('agent', 'acme');

async function connect(path: string): Promise<Client> {
  const client = new Client({ name: 'test-client', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}${path}`), { requestInit: { headers: { Authorization: `Bearer ${key.key}` } } }));
  return client;
}

beforeAll(async () => {
  sdk = await startSdkServer(UPSTREAM_TOKEN, { rejectTool: true });
  gw = await startGateway([
    plan('pro', { tier: 1 }),
    account('acme', 'pro'),
    ...key.docs,
    secret('tools-token', { authorization: `Bearer ${UPSTREAM_TOKEN}` }),
    mcpServer('tools', {
      url: sdk.url,
      prefix: 'sdk',
      headers: [{ name: 'Authorization', secretKeyRef: { name: 'tools-token', key: 'authorization' } }],
      pricing: { perCallUsd: 0.001 },
    }),
    {
      apiVersion: API,
      kind: 'Guardrail',
      metadata: { name: 'tool-arguments' },
      spec: {
        endpoints: ['mcp'],
        stages: ['request'],
        checks: [
          { detector: 'secrets', action: 'block' },
          { detector: 'email', action: 'mask' },
        ],
      },
    },
    {
      apiVersion: API,
      kind: 'Guardrail',
      metadata: { name: 'tool-results' },
      spec: { endpoints: ['mcp'], stages: ['response'], selector: { models: ['mcp:tools/*'] }, checks: [{ detector: 'card', action: 'block' }] },
    },
    {
      apiVersion: API,
      kind: 'Guardrail',
      metadata: { name: 'tool-errors' },
      spec: { endpoints: ['mcp'], stages: ['response'], selector: { models: ['mcp:tools/reject'] }, checks: [{ detector: 'ip', action: 'mask' }] },
    },
    {
      apiVersion: API,
      kind: 'Guardrail',
      metadata: { name: 'models-only' },
      spec: { checks: [{ name: 'codename', detector: 'words', words: ['Project Falcon'], action: 'block' }] },
    },
  ]);
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await sdk?.close();
});

const lastEvent = () => gw.sink.events.at(-1)!;
const text = (r: Awaited<ReturnType<Client['callTool']>>): string => (r.content as { type: string; text: string }[]).map((c) => c.text).join('');

describe('Guardrails on MCP tools/call', () => {
  it('blocks a secret in the arguments with a JSON-RPC error naming the guardrail: no upstream call, nothing charged', async () => {
    for (const [path, name] of [
      ['/mcp/tools', 'echo'],
      ['/mcp', 'sdk__echo'],
    ] as const) {
      const client = await connect(path);
      const calls = sdk.calls.length;
      const events = gw.sink.events.length;
      const err = await client.callTool({ name, arguments: { text: `use ${AWS_KEY}` } }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(McpError);
      expect((err as McpError).code).toBe(-32007);
      expect((err as McpError).message).toContain('blocked by guardrail tool-arguments (check secrets: aws-access-key found)');
      expect((err as McpError).message).not.toContain(AWS_KEY);
      expect((err as McpError).data).toEqual({ type: 'content_blocked', guardrail: 'tool-arguments', check: 'secrets' });
      expect(sdk.calls.length).toBe(calls);
      expect(gw.sink.events.length).toBe(events + 1);
      expect(lastEvent()).toMatchObject({ endpoint: 'mcp', requestedModel: 'mcp:tools/echo', status: 400, errorCode: 'content_blocked', costNano: 0 });
      expect(lastEvent().guardrails).toEqual([
        { guardrail: 'tool-arguments', check: 'secrets', action: 'block', stage: 'request', kind: 'aws-access-key', count: 1 },
      ]);
      expect(JSON.stringify(lastEvent())).not.toContain(AWS_KEY);
      await client.close();
    }
  });

  it('masks an email in the arguments before the McpServer sees it; the call is charged as usual', async () => {
    const client = await connect('/mcp/tools');
    const r = await client.callTool({ name: 'echo', arguments: { text: `write to ${EMAIL} today` } });
    // The echo tool answers what it received.
    expect(text(r)).toBe('write to <EMAIL_1> today');
    expect(lastEvent()).toMatchObject({ endpoint: 'mcp', status: 200, errorCode: null, costNano: 1_000_000 });
    expect(lastEvent().guardrails).toEqual([{ guardrail: 'tool-arguments', check: 'email', action: 'mask', stage: 'request', kind: 'email', count: 1 }]);
    expect(JSON.stringify(gw.sink.events)).not.toContain(EMAIL);
    await client.close();
  });

  it("blocks a card in the tool's result as an isError result naming the guardrail, settled as content_blocked at no charge", async () => {
    for (const [path, name] of [
      ['/mcp/tools', 'echo'],
      ['/mcp', 'sdk__echo'],
    ] as const) {
      const client = await connect(path);
      const calls = sdk.calls.length;
      const r = await client.callTool({ name, arguments: { text: `card ${CARD} on file` } });
      expect(sdk.calls.length).toBe(calls + 1);
      expect(r.isError).toBe(true);
      expect(text(r)).toContain('The answer was blocked by guardrail tool-results (check card: card found)');
      expect(JSON.stringify(r)).not.toContain('4111');
      expect(lastEvent()).toMatchObject({ endpoint: 'mcp', status: 400, errorCode: 'content_blocked', costNano: 0 });
      expect(lastEvent().guardrails).toEqual([{ guardrail: 'tool-results', check: 'card', action: 'block', stage: 'response', kind: 'card', count: 1 }]);
      await client.close();
    }
    const m = await gw.metrics.registry.getSingleMetricAsString('svc_gateway_guardrail_matches_total');
    expect(m).toMatch(/guardrail="tool-results",check="card",action="block",stage="response",kind="card"\} 2/);
  });

  it("checks the text of the tool's JSON-RPC error: a card blocked as the same isError result, an address masked", async () => {
    const client = await connect('/mcp/tools');
    try {
      // Unguarded, the upstream's error quotes the card back to the client; here it never leaves the gateway.
      const blocked = await client.callTool({ name: 'reject', arguments: { text: `card ${CARD} on file` } });
      expect(blocked.isError).toBe(true);
      expect(text(blocked)).toBe('The answer was blocked by guardrail tool-results (check card: card found).');
      expect(JSON.stringify(blocked)).not.toContain('4111');
      expect(lastEvent()).toMatchObject({ endpoint: 'mcp', requestedModel: 'mcp:tools/reject', status: 400, errorCode: 'content_blocked', costNano: 0 });
      expect(lastEvent().guardrails).toEqual([{ guardrail: 'tool-results', check: 'card', action: 'block', stage: 'response', kind: 'card', count: 1 }]);

      const masked = await client.callTool({ name: 'reject', arguments: { text: `host ${HOST_IP} refused` } }).then(
        () => null,
        (err: unknown) => err,
      );
      expect(masked).toBeInstanceOf(McpError);
      expect((masked as McpError).code).toBe(-32042);
      expect((masked as McpError).message).toContain('Rejected: host <IPV4_1> refused');
      expect((masked as McpError).message).not.toContain(HOST_IP);
      expect(lastEvent()).toMatchObject({ endpoint: 'mcp', requestedModel: 'mcp:tools/reject', status: 200, errorCode: 'tool_error', costNano: 0 });
      expect(lastEvent().guardrails).toEqual([{ guardrail: 'tool-errors', check: 'ip', action: 'mask', stage: 'response', kind: 'ipv4', count: 1 }]);
      expect(JSON.stringify(gw.sink.events)).not.toContain(HOST_IP);
    } finally {
      await client.close();
    }
  });

  it('a Guardrail that does not list mcp leaves tool calls alone', async () => {
    const client = await connect('/mcp/tools');
    const r = await client.callTool({ name: 'echo', arguments: { text: 'about Project Falcon' } });
    expect(text(r)).toBe('about Project Falcon');
    expect(lastEvent().guardrails).toBeUndefined();
    await client.close();
  });
});

describe('the MCP example of docs/guardrails.md', () => {
  it('masks an email in a tool call and blocks a secret, as the page says', async () => {
    const doc = parse(docExample('docs/guardrails.md', 'guardrail-mcp')) as object;
    const g = await startGateway([
      plan('pro', { tier: 1 }),
      account('acme', 'pro'),
      ...key.docs,
      secret('tools-token', { authorization: `Bearer ${UPSTREAM_TOKEN}` }),
      mcpServer('tools', { url: sdk.url, headers: [{ name: 'Authorization', secretKeyRef: { name: 'tools-token', key: 'authorization' } }] }),
      doc,
    ]);
    try {
      const client = new Client({ name: 'test-client', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${g.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key.key}` } } }));
      expect(text(await client.callTool({ name: 'tools__echo', arguments: { text: `to ${EMAIL}` } }))).toBe('to <EMAIL_1>');
      await expect(client.callTool({ name: 'tools__echo', arguments: { text: AWS_KEY } })).rejects.toThrow(/blocked by guardrail tool-data/);
      await client.close();
    } finally {
      await g.close();
    }
  });
});
