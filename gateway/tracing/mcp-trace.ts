// One MCP request or notification as an OpenTelemetry SERVER span, after the MCP semantic conventions (GenAI
// conventions, mcp.md): named "{mcp.method.name} {target}" (the tool of a tools/call, the prompt of prompts/get;
// else the method alone), with mcp.method.name, jsonrpc.request.id, mcp.protocol.version, mcp.session.id,
// gen_ai.tool.name and gen_ai.operation.name "execute_tool" for a tools/call, network.* of the HTTP transport, and on
// an error rpc.response.status_code and error.type (the JSON-RPC code, or "tool_error" for a result with isError).
// The parent is the trace context in params._meta (as the conventions propagate it), else the HTTP traceparent.
// Nothing secret: the session id is traced as a digest (the id itself opens the session), no key, no argument,
// no result, no upstream URL or credential. Ours under svc.*: account, key name, the McpServer of /mcp/<server>.
import { createHash } from 'node:crypto';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, defaultTextMapGetter, type Attributes, type Span, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { McpAnswer } from '../mcp/answer.ts';
import type { McpRequestInfo, McpTrace, McpTracer } from '../mcp/trace.ts';

const propagator = new W3CTraceContextPropagator();
const MAX_ATTRIBUTE = 256;

/** A stable, non-secret name of a session: the first 32 hex digits of the SHA-256 of its id. */
export function sessionDigest(id: string): string {
  return createHash('sha256').update(id).digest('hex').slice(0, 32);
}

const text = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v.slice(0, MAX_ATTRIBUTE) : null);

function carrier(info: McpRequestInfo, meta: unknown): Record<string, string | string[] | undefined> {
  const m = typeof meta === 'object' && meta !== null ? (meta as Record<string, unknown>) : {};
  if (typeof m.traceparent === 'string') return { traceparent: m.traceparent, ...(typeof m.tracestate === 'string' ? { tracestate: m.tracestate } : {}) };
  return info.headers;
}

const NOOP: McpTrace = { end: (a) => a };

export function mcpTracer(tracer: Tracer): McpTracer {
  return {
    start(info) {
      const message = info.message;
      // A client's answer to a server's request carries no method: nothing of MCP's conventions to trace.
      if (message.kind === 'response') return NOOP;
      const msg = message.msg;
      const params = msg.params ?? {};
      const tool = msg.method === 'tools/call' ? text(params.name) : null;
      const prompt = msg.method === 'prompts/get' ? text(params.name) : null;
      const attributes: Attributes = {
        'mcp.method.name': msg.method,
        'network.transport': 'tcp',
        'network.protocol.name': 'http',
        'network.protocol.version': info.httpVersion,
        'svc.account': info.account,
        'svc.api_key.name': info.apiKeyName,
      };
      if (message.kind === 'request') attributes['jsonrpc.request.id'] = String(message.msg.id);
      const version = info.protocolVersion ?? (msg.method === 'initialize' ? text(params.protocolVersion) : null);
      if (version) attributes['mcp.protocol.version'] = version;
      if (info.sessionId) attributes['mcp.session.id'] = sessionDigest(info.sessionId);
      if (tool) Object.assign(attributes, { 'gen_ai.tool.name': tool, 'gen_ai.operation.name': 'execute_tool' });
      if (prompt) attributes['gen_ai.prompt.name'] = prompt;
      const uri = text(params.uri);
      if (uri && msg.method.startsWith('resources/')) attributes['mcp.resource.uri'] = uri;
      if (info.server) attributes['svc.mcp.server'] = info.server;
      const parent = propagator.extract(ROOT_CONTEXT, carrier(info, params._meta), defaultTextMapGetter);
      const span = tracer.startSpan(`${msg.method}${tool || prompt ? ` ${tool ?? prompt}` : ''}`, { kind: SpanKind.SERVER, attributes }, parent);
      const id = message.kind === 'request' ? message.msg.id : null;
      return { end: (answer) => finish(span, id, info.sessionId, answer) };
    },
  };
}

type Message = Record<string, unknown>;

/** The response's error code, "tool_error" for a result with isError, or null. */
function errorOf(m: Message): string | null {
  const error = m.error as { code?: unknown } | undefined;
  if (error && typeof error === 'object') return String(error.code ?? '_OTHER');
  return (m.result as { isError?: unknown } | undefined)?.isError === true ? 'tool_error' : null;
}

function close(span: Span, status: number, error: string | null, rpcCode: string | null): void {
  span.setAttribute('http.response.status_code', status);
  if (rpcCode) span.setAttribute('rpc.response.status_code', rpcCode);
  if (error) {
    span.setAttribute('error.type', error);
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end();
}

function finish(span: Span, id: string | number | null, sentSession: string | null, a: McpAnswer): McpAnswer {
  // initialize: the session starts with the answer.
  if (!sentSession && a.kind !== 'status' && a.sessionId) span.setAttribute('mcp.session.id', sessionDigest(a.sessionId));
  switch (a.kind) {
    case 'json': {
      const m = (typeof a.body === 'object' && a.body !== null ? a.body : {}) as Message;
      const error = errorOf(m);
      close(span, a.status, error ?? (a.status >= 400 ? String(a.status) : null), error && error !== 'tool_error' ? error : null);
      return a;
    }
    case 'accepted':
      close(span, 202, null, null);
      return a;
    case 'status':
      close(span, a.status, a.status >= 400 ? String(a.status) : null, null);
      return a;
    case 'stream':
      return { ...a, events: traced(a.events, span, id) };
    default: {
      const never: never = a;
      return never;
    }
  }
}

/** The stream passed on as it is; the response to the request, once seen, decides the span's outcome. */
async function* traced(events: AsyncIterable<string>, span: Span, id: string | number | null): AsyncGenerator<string> {
  let response: Message | null = null;
  let failed = false;
  try {
    for await (const event of events) {
      if (response === null && id !== null && event.includes('"id"')) response = responseIn(event, id);
      yield event;
    }
  } catch (err) {
    failed = true;
    throw err;
  } finally {
    const error = response ? errorOf(response) : failed || id !== null ? 'stream_ended' : null;
    close(span, 200, error, response && error && error !== 'tool_error' ? error : null);
  }
}

function responseIn(event: string, id: string | number): Message | null {
  const data = event
    .split('\n')
    .filter((l) => l.startsWith('data:'))
    .map((l) => l.slice(l.startsWith('data: ') ? 6 : 5))
    .join('\n');
  try {
    const m = JSON.parse(data) as unknown;
    if (typeof m !== 'object' || m === null || Array.isArray(m)) return null;
    const r = m as Message;
    return r.id === id && r.method === undefined && (r.result !== undefined || r.error !== undefined) ? r : null;
  } catch {
    return null;
  }
}
