// MCP requests through a gateway process traced to a real OpenTelemetry Collector, after the MCP semantic
// conventions: one SERVER span per message, named "{mcp.method.name} {target}", with mcp.method.name,
// jsonrpc.request.id, mcp.protocol.version, mcp.session.id (a digest of the session id, never the id), the tool as
// gen_ai.tool.name, network.* of the transport, errors as rpc.response.status_code and error.type; in the trace of
// params._meta.traceparent, else of the HTTP traceparent. No key, session id or upstream credential in any span.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeManifests } from '../helpers/fleet.ts';
import { basics, mcpServer, secret } from '../helpers/manifests.ts';
import { startSdkServer, type SdkUpstream } from '../helpers/mcp-upstreams.ts';
import { startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';
import { until } from '../helpers/until.ts';
import { startCollector, type ExportedSpan, type TestCollector } from './collector.ts';

const TOKEN = 'upstream-credential-otel-7c41';
let upstream: SdkUpstream;
let collector: TestCollector;
let gw: GatewayProcess;
let key: string;
const sessions: string[] = [];
const SERVER = 2;
const ERROR = 2;

beforeAll(async () => {
  [upstream, collector] = await Promise.all([startSdkServer(TOKEN), startCollector()]);
  const b = basics();
  key = b.keys.builder;
  gw = await startGatewayProcess({
    SVC_CONFIG: writeManifests([
      ...b.docs,
      mcpServer('demo-tools', { mock: {} }),
      secret('tools-token', { authorization: `Bearer ${TOKEN}` }),
      mcpServer('tools', {
        url: upstream.url,
        prefix: 'sdk',
        headers: [{ name: 'Authorization', secretKeyRef: { name: 'tools-token', key: 'authorization' } }],
      }),
    ]),
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
    LOG_LEVEL: 'warn',
  });
}, 120_000);

afterAll(async () => {
  await gw?.stop();
  await Promise.allSettled([collector?.stop(), upstream?.close()]);
});

const traceId = (): string => createHash('sha256').update(String(Math.random())).digest('hex').slice(0, 32);
const PARENT = '00f067aa0ba902b7';

async function rpc(path: string, body: object, headers: Record<string, string> = {}): Promise<{ status: number; sessionId: string | null; text: string }> {
  const res = await fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', ...body }),
  });
  const sessionId = res.headers.get('mcp-session-id');
  if (sessionId) sessions.push(sessionId);
  return { status: res.status, sessionId, text: await res.text() };
}

async function spansOf(trace: string, n: number): Promise<ExportedSpan[]> {
  await until(() => collector.spans.filter((s) => s.traceId === trace).length >= n, 20_000, `${n} spans of trace ${trace}`);
  return collector.spans.filter((s) => s.traceId === trace);
}

const digest = (id: string): string => createHash('sha256').update(id).digest('hex').slice(0, 32);

describe('MCP requests through a gateway with OTEL_EXPORTER_OTLP_ENDPOINT set', () => {
  it('initialize on /mcp: a SERVER span in the HTTP traceparent trace, with the new session as a digest', async () => {
    const trace = traceId();
    const init = await rpc(
      '/mcp',
      { id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } },
      { traceparent: `00-${trace}-${PARENT}-01` },
    );
    expect(init.status).toBe(200);
    expect(init.sessionId).toBeTruthy();
    const [span] = await spansOf(trace, 1);
    expect(span).toMatchObject({ name: 'initialize', kind: SERVER, parentSpanId: PARENT });
    expect(span?.attributes).toMatchObject({
      'mcp.method.name': 'initialize',
      'jsonrpc.request.id': '1',
      'mcp.protocol.version': '2025-06-18',
      'mcp.session.id': digest(init.sessionId as string),
      'network.transport': 'tcp',
      'network.protocol.name': 'http',
      'network.protocol.version': '1.1',
      'http.response.status_code': 200,
      'svc.account': 'acme',
      'svc.api_key.name': 'builder-key',
    });
  });

  it('tools/call in the trace of params._meta: named by the tool, gen_ai.tool.name, execute_tool, the session digest', async () => {
    const init = await rpc('/mcp', {
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    });
    const sid = init.sessionId as string;
    const trace = traceId();
    const call = await rpc(
      '/mcp',
      {
        id: 'call-7',
        method: 'tools/call',
        params: { name: 'demo-tools__add', arguments: { a: 2, b: 3 }, _meta: { traceparent: `00-${trace}-${PARENT}-01` } },
      },
      { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18', traceparent: `00-${traceId()}-${PARENT}-01` },
    );
    expect(call.text).toContain('"text":"5"');
    const [span] = await spansOf(trace, 1);
    expect(span).toMatchObject({ name: 'tools/call demo-tools__add', kind: SERVER, parentSpanId: PARENT });
    expect(span?.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'demo-tools__add',
      'gen_ai.operation.name': 'execute_tool',
      'jsonrpc.request.id': 'call-7',
      'mcp.session.id': digest(sid),
      'mcp.protocol.version': '2025-06-18',
    });
    expect(span?.attributes['error.type']).toBeUndefined();
    expect(span?.status.code).not.toBe(ERROR);
  });

  it('a tool result with isError is error.type tool_error; an unknown tool its JSON-RPC code', async () => {
    const failing = traceId();
    await rpc(
      '/mcp/demo-tools',
      { id: 2, method: 'tools/call', params: { name: 'add', arguments: { a: 'x', b: 1 } } },
      { traceparent: `00-${failing}-${PARENT}-01` },
    );
    const [f] = await spansOf(failing, 1);
    expect(f).toMatchObject({ name: 'tools/call add', status: { code: ERROR } });
    expect(f?.attributes).toMatchObject({ 'error.type': 'tool_error', 'svc.mcp.server': 'demo-tools' });
    expect(f?.attributes['rpc.response.status_code']).toBeUndefined();
    const unknown = traceId();
    await rpc('/mcp/demo-tools', { id: 3, method: 'tools/call', params: { name: 'nope', arguments: {} } }, { traceparent: `00-${unknown}-${PARENT}-01` });
    const [u] = await spansOf(unknown, 1);
    expect(u?.attributes).toMatchObject({ 'rpc.response.status_code': '-32602', 'error.type': '-32602' });
    expect(u?.status.code).toBe(ERROR);
  });

  it('an SSE answer from a real SDK server ends its span with the stream, the response deciding the outcome', async () => {
    const init = await rpc('/mcp/tools', {
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    });
    const sid = init.sessionId as string;
    await rpc('/mcp/tools', { method: 'notifications/initialized' }, { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' });
    const trace = traceId();
    const call = await rpc(
      '/mcp/tools',
      { id: 4, method: 'tools/call', params: { name: 'fail', arguments: {} } },
      { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18', traceparent: `00-${trace}-${PARENT}-01` },
    );
    expect(call.text).toContain('event: message');
    const [span] = await spansOf(trace, 1);
    expect(span).toMatchObject({ name: 'tools/call fail', status: { code: ERROR } });
    expect(span?.attributes).toMatchObject({ 'error.type': 'tool_error', 'mcp.session.id': digest(sid), 'svc.mcp.server': 'tools' });
  });

  it('puts no key, session id or upstream credential in any exported span', async () => {
    await until(() => collector.spans.some((s) => s.name === 'notifications/initialized'), 20_000, 'the notification span');
    const everything = JSON.stringify(collector.spans);
    expect(sessions.length).toBeGreaterThan(2);
    for (const secretText of [key, key.slice(-12), TOKEN, ...sessions]) expect(everything).not.toContain(secretText);
    expect(upstream.authorizations).toContain(`Bearer ${TOKEN}`);
  });
});
