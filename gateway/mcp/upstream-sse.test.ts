// The legacy HTTP+SSE client against raw upstreams: an endpoint on another origin is refused before the credential
// goes there, CRLF-framed events are read, and notifications are accepted without any upstream request.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { CompiledMcpServer } from '../contract/snapshot.ts';
import { callSseUpstream } from './upstream-sse.ts';
import { UpstreamFailed } from './upstream-types.ts';

const servers: Server[] = [];

afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const s = createServer(handler);
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

function server(url: string): CompiledMcpServer {
  return {
    name: 'raw',
    url,
    transport: 'sse',
    prefix: 'raw',
    headers: [{ name: 'Authorization', credential: { kind: 'value', value: 'Bearer secret-upstream-token' } }],
    include: ['*'],
    exclude: [],
    perCallNano: 0,
    toolNano: {},
    timeouts: { connectMs: 5_000, firstByteMs: 30_000, totalMs: 60_000 },
  } as CompiledMcpServer;
}

const ping = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });

describe('callSseUpstream', () => {
  it('refuses an endpoint on another origin: the credential is not sent there', async () => {
    const seen: string[] = [];
    const other = await serve((req, res) => {
      seen.push(String(req.headers.authorization));
      res.writeHead(202).end();
    });
    const base = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' }).write(`event: endpoint\ndata: ${other}/messages\n\n`);
    });
    const err = await callSseUpstream(
      server(`${base}/sse`),
      { method: 'POST', body: ping, sessionId: null, protocolVersion: null },
      new AbortController().signal,
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamFailed);
    expect((err as Error).message).toBe('sent an endpoint on another origin');
    expect(seen).toEqual([]);
  });

  it('reads CRLF-framed events: initialize replayed first, then the request, its response relayed', async () => {
    let stream: ServerResponse | undefined;
    const posted: unknown[] = [];
    const base = await serve((req, res) => {
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'text/event-stream' }).write('event: endpoint\r\ndata: /messages?s=1\r\n\r\n');
        stream = res;
        return;
      }
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        res.writeHead(202).end();
        const m = JSON.parse(body) as { id?: unknown; method?: string };
        posted.push(m.method);
        if (m.id !== undefined) stream?.write(`event: message\r\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { ok: m.method } })}\r\n\r\n`);
      });
    });
    const up = await callSseUpstream(
      server(`${base}/sse`),
      { method: 'POST', body: ping, sessionId: null, protocolVersion: null },
      new AbortController().signal,
    );
    expect(up).toMatchObject({ status: 200, contentType: 'text/event-stream', sessionId: null });
    let text = '';
    for await (const c of up.body) text += String(c);
    expect(text).toBe(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: 1, result: { ok: 'ping' } })}\n\n`);
    expect(posted).toEqual(['initialize', 'notifications/initialized', 'ping']);
  });

  it('accepts a notification with no upstream request (202)', async () => {
    let requests = 0;
    const base = await serve((_req, res) => {
      requests++;
      res.writeHead(500).end();
    });
    const up = await callSseUpstream(
      server(`${base}/sse`),
      { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), sessionId: null, protocolVersion: null },
      new AbortController().signal,
    );
    expect(up.status).toBe(202);
    expect(requests).toBe(0);
  });
});
