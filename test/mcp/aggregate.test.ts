// /mcp beyond tools, through the official SDK client to server-everything and an SDK server: resources, resource
// templates and prompts merged under /mcp's names and routed back by them, completions, what a key may not use left
// out, and GET /mcp: one stream carrying every server's own notifications (list changes, resource updates, logs).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema, ResourceUpdatedNotificationSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { account, apiKey, mcpServer, plan, secret } from '../helpers/manifests.ts';
import { startEverything, startSdkServer, type SdkUpstream, type Upstream } from '../helpers/mcp-upstreams.ts';
import { until } from '../helpers/until.ts';
import { lastIds } from '../../gateway/mcp/aggregate-stream.ts';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { docExample } from '../helpers/docs.ts';
import { ROOT } from '../helpers/process.ts';

const TOKEN = 'aggregate-upstream-credential-41c9';
let everything: Upstream;
let sdk: SdkUpstream;
let gw: TestGateway;
const key = apiKey('agent', 'acme');
// A key whose plan opens only the SDK server.
const narrow = apiKey('narrow', 'small');

async function connect(k = key.key): Promise<Client> {
  const client = new Client({ name: 'aggregate-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${k}` } } }));
  return client;
}

beforeAll(async () => {
  [everything, sdk] = await Promise.all([startEverything(), startSdkServer(TOKEN)]);
  gw = await startGateway([
    plan('pro', { tier: 1 }),
    plan('only-tools', { tier: 1, mcp: { servers: ['tools'] } }),
    account('acme', 'pro'),
    account('small', 'only-tools'),
    ...key.docs,
    ...narrow.docs,
    secret('tools-token', { authorization: `Bearer ${TOKEN}` }),
    mcpServer('everything', { url: everything.url }),
    mcpServer('tools', { url: sdk.url, prefix: 'sdk', headers: [{ name: 'Authorization', secretKeyRef: { name: 'tools-token', key: 'authorization' } }] }),
  ]);
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await Promise.all([everything?.close(), sdk?.close()]);
});

describe('/mcp resources, prompts and completions', () => {
  it('lists every server’s resources under svc-mcp://<prefix>/<uri> and reads each from its own server', async () => {
    const client = await connect();
    const { resources } = await client.listResources();
    const uris = resources.map((r) => r.uri);
    expect(uris).toContain('svc-mcp://sdk/note://one');
    const doc = uris.find((u) => u.startsWith('svc-mcp://everything/demo://'));
    expect(doc).toBeDefined();
    expect(resources.find((r) => r.uri === 'svc-mcp://sdk/note://one')?.name).toBe('sdk__note');
    const note = await client.readResource({ uri: 'svc-mcp://sdk/note://one' });
    expect(note.contents).toEqual([{ uri: 'svc-mcp://sdk/note://one', text: 'the note' }]);
    const other = await client.readResource({ uri: doc as string });
    expect(other.contents[0]?.uri).toBe(doc);
    await expect(client.readResource({ uri: 'svc-mcp://nobody/x://y' })).rejects.toThrow(/Resource not found/);
    await client.close();
  });

  it('lists resource templates with the prefixed URI, and a URI filled in from one reads from its server', async () => {
    const client = await connect();
    const { resourceTemplates } = await client.listResourceTemplates();
    const text = resourceTemplates.find((t) => t.uriTemplate.endsWith('/text/{resourceId}'));
    expect(text?.uriTemplate).toBe('svc-mcp://everything/demo://resource/dynamic/text/{resourceId}');
    const r = await client.readResource({ uri: 'svc-mcp://everything/demo://resource/dynamic/text/3' });
    expect(r.contents[0]?.uri).toBe('svc-mcp://everything/demo://resource/dynamic/text/3');
    expect(JSON.stringify(r.contents)).toContain('3');
    const done = await client.complete({ ref: { type: 'ref/resource', uri: text?.uriTemplate as string }, argument: { name: 'resourceId', value: '1' } });
    expect(done.completion.values.length).toBeGreaterThan(0);
    await client.close();
  });

  it('lists prompts as <prefix>__<name>, gets one from its server and completes its arguments there', async () => {
    const client = await connect();
    const names = (await client.listPrompts()).prompts.map((p) => p.name);
    expect(names).toContain('sdk__greet');
    expect(names).toContain('everything__simple-prompt');
    const got = await client.getPrompt({ name: 'sdk__greet', arguments: { who: 'Ada' } });
    expect(got.messages).toEqual([{ role: 'user', content: { type: 'text', text: 'Hello Ada' } }]);
    const c = await client.complete({ ref: { type: 'ref/prompt', name: 'everything__completable-prompt' }, argument: { name: 'department', value: 'E' } });
    expect(c.completion.values).toContain('Engineering');
    await expect(client.getPrompt({ name: 'everything__nope' })).rejects.toThrow();
    await client.close();
  });

  it('leaves out the resources and prompts of a server the key may not use, and refuses to read them', async () => {
    const client = await connect(narrow.key);
    const uris = (await client.listResources()).resources.map((r) => r.uri);
    expect(uris).toEqual(['svc-mcp://sdk/note://one']);
    expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual(['sdk__greet']);
    await expect(client.readResource({ uri: 'svc-mcp://everything/demo://resource/dynamic/text/3' })).rejects.toThrow(/Resource not found/);
    await expect(client.getPrompt({ name: 'everything__simple-prompt' })).rejects.toThrow(/Unknown prompt/);
    await client.close();
  });
});

describe('docs/mcp.md', () => {
  it('mcp-resources: lists resources with svc-mcp:// URIs, reads the first, lists prompts', async () => {
    const code = docExample('docs/mcp.md', 'mcp-resources').replaceAll('http://127.0.0.1:8080', gw.url);
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', code], {
      cwd: ROOT,
      env: { ...process.env, SVC_KEY: key.key },
    });
    const lines = stdout.trim().split('\n');
    expect(lines).toContain('svc-mcp://sdk/note://one');
    expect(lines.at(-2)).toBe(lines[0]);
    expect(lines.at(-1)?.split(' ')).toContain('sdk__greet');
  });
});

describe('GET /mcp', () => {
  it('relays every server’s notifications on one stream: list changes, resource updates with /mcp’s URI, logs', async () => {
    const client = await connect();
    const changed: string[] = [];
    const updated: string[] = [];
    const logs: { logger?: string; level: string }[] = [];
    client.setNotificationHandler(ToolListChangedNotificationSchema, (n) => void changed.push(n.method));
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updated.push(n.params.uri));
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push({ logger: n.params.logger, level: n.params.level }));
    // The SDK client opens GET /mcp once initialized (the gateway then opens every server's stream), in the
    // background: a server's notification sent before its stream is open has nowhere to go.
    await until(() => sdk.open() > 0, 60_000, 'the SDK server’s GET stream open');
    await client.callTool({ name: 'sdk__grow', arguments: {} });
    await until(() => changed.length > 0, 60_000, 'tools/list_changed');
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('sdk__grown_1');
    // server-everything: a subscription's updates and its log messages come on its own stream.
    const uri = 'svc-mcp://everything/demo://resource/dynamic/text/7';
    await client.subscribeResource({ uri });
    await client.callTool({ name: 'everything__toggle-subscriber-updates', arguments: {} });
    await until(() => updated.length > 0, 60_000, 'resources/updated');
    expect(new Set(updated)).toEqual(new Set([uri]));
    await until(() => logs.some((l) => l.logger === 'everything'), 60_000, 'a log message of server-everything');
    await client.callTool({ name: 'everything__toggle-subscriber-updates', arguments: {} });
    await client.unsubscribeResource({ uri });
    await client.close();
  }, 180_000);

  it('resumes with Last-Event-ID: each server replays, from its own id, what the client missed', async () => {
    const h = { authorization: `Bearer ${key.key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const rpc = (body: object, sid?: string): Promise<Response> =>
      fetch(`${gw.url}/mcp`, { method: 'POST', headers: sid ? { ...h, 'mcp-session-id': sid } : h, body: JSON.stringify(body) });
    const init = await rpc({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    const sid = init.headers.get('mcp-session-id') as string;
    await init.text();
    await (await rpc({ jsonrpc: '2.0', method: 'notifications/initialized' }, sid)).text();
    // Reads the stream's events (id and data) until `n` carry an id.
    const read = async (lastEventId?: string, n = 2): Promise<{ id: string; data: string }[]> => {
      const headers = { ...h, accept: 'text/event-stream', 'mcp-session-id': sid, ...(lastEventId ? { 'last-event-id': lastEventId } : {}) };
      const r = await fetch(`${gw.url}/mcp`, { headers });
      expect(r.status).toBe(200);
      const out: { id: string; data: string }[] = [];
      let buf = '';
      const decoder = new TextDecoder();
      for await (const chunk of r.body as unknown as AsyncIterable<Uint8Array>) {
        buf += decoder.decode(chunk, { stream: true });
        let i;
        while ((i = buf.indexOf('\n\n')) !== -1) {
          const lines = buf.slice(0, i).split('\n');
          buf = buf.slice(i + 2);
          const id = lines.find((l) => l.startsWith('id: '))?.slice(4);
          const data = lines.find((l) => l.startsWith('data: '))?.slice(6);
          if (id && data) out.push({ id, data });
        }
        // Leaving the loop cancels the body: the gateway sees the client leave.
        if (out.length >= n) break;
      }
      return out;
    };
    const first = read();
    // server-everything logs every 5 s once asked, on the session's GET stream, and keeps its events.
    const toggle = await rpc({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'everything__toggle-simulated-logging', arguments: {} } }, sid);
    await toggle.text();
    const [a, b] = await first;
    expect(a?.id).toMatch(/^svcev1\./);
    // From the first event's id, server-everything replays (the stream must have closed upstream first: retried).
    let replayed: { id: string; data: string }[] = [];
    await until(
      async () => {
        replayed = await read(a?.id, 1).catch(() => []);
        return replayed.length > 0;
      },
      60_000,
      'a resumed stream',
      200,
    );
    // A replay, not a new event: server-everything replays what it sent after that id (its store keeps every
    // stream of the session, the answer to the toggle included), which a new stream never carries.
    const m = JSON.parse(replayed[0]?.data as string) as { id?: unknown };
    expect(m.id === 2 || replayed[0]?.data === b?.data).toBe(true);
    expect(lastIds(replayed[0]?.id as string).everything).toBeDefined();
    expect(lastIds(replayed[0]?.id as string).everything).not.toBe(lastIds(a?.id as string).everything);
    await (await rpc({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'everything__toggle-simulated-logging', arguments: {} } }, sid)).text();
    await fetch(`${gw.url}/mcp`, { method: 'DELETE', headers: { ...h, 'mcp-session-id': sid } });
  }, 120_000);

  it('answers GET without a session with a JSON-RPC error, never a stream', async () => {
    const r = await fetch(`${gw.url}/mcp`, { headers: { authorization: `Bearer ${key.key}`, accept: 'text/event-stream' } });
    expect(r.status).toBe(400);
    expect(((await r.json()) as { error: { code: number } }).error.code).toBe(-32600);
  });
});
