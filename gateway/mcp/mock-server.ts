// The built-in mock MCP server (McpServer spec.mock): three tools answered in process, so the offline demo and the
// tests have a server with no network. Stateless: it keeps no session and offers no GET stream.
import { Readable } from 'node:stream';
import type { UpstreamAnswer, UpstreamRequest } from './upstream-types.ts';

const VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'];

const TOOLS = [
  {
    name: 'echo',
    description: 'Returns the text it is given.',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  },
  {
    name: 'add',
    description: 'Adds two numbers.',
    inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
  },
  { name: 'time', description: "The gateway's current time (UTC, ISO 8601).", inputSchema: { type: 'object', properties: {} } },
];

type Msg = { id?: unknown; method?: unknown; params?: Record<string, unknown> };

function text(t: string): Record<string, unknown> {
  return { content: [{ type: 'text', text: t }] };
}

function call(params: Record<string, unknown> | undefined): Record<string, unknown> | { error: { code: number; message: string } } {
  const args = (params?.arguments ?? {}) as Record<string, unknown>;
  switch (params?.name) {
    case 'echo':
      return text(String(args.text ?? ''));
    case 'add': {
      const a = Number(args.a);
      const b = Number(args.b);
      return Number.isFinite(a) && Number.isFinite(b) ? text(String(a + b)) : { ...text('a and b must be numbers'), isError: true };
    }
    case 'time':
      return text(new Date().toISOString());
    default:
      return { error: { code: -32602, message: `Unknown tool: ${String(params?.name)}` } };
  }
}

function result(m: Msg): Record<string, unknown> | { error: { code: number; message: string } } {
  switch (m.method) {
    case 'initialize': {
      const asked = String(m.params?.protocolVersion ?? '');
      return {
        protocolVersion: VERSIONS.includes(asked) ? asked : '2025-06-18',
        capabilities: { tools: {} },
        serverInfo: { name: 'svc-gateway-mock', version: '1.0.0' },
      };
    }
    case 'ping':
      return {};
    case 'tools/list':
      return { tools: TOOLS };
    case 'tools/call':
      return call(m.params);
    default:
      return { error: { code: -32601, message: `Method not found: ${String(m.method)}` } };
  }
}

function answer(status: number, body: unknown): UpstreamAnswer {
  const text = body === undefined ? '' : JSON.stringify(body);
  return { status, contentType: body === undefined ? '' : 'application/json', sessionId: null, body: Readable.from([Buffer.from(text)]) };
}

export function mockAnswer(req: UpstreamRequest): Promise<UpstreamAnswer> {
  if (req.method !== 'POST') return Promise.resolve(answer(405, undefined));
  const m = JSON.parse(req.body ?? '{}') as Msg;
  // Notifications and the client's responses: taken, no answer.
  if (m.id === undefined || m.method === undefined) return Promise.resolve(answer(202, undefined));
  const r = result(m);
  const body = 'error' in r ? { jsonrpc: '2.0', id: m.id, error: r.error } : { jsonrpc: '2.0', id: m.id, result: r };
  return Promise.resolve(answer(200, body));
}
