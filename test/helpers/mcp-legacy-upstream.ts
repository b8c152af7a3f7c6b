// An MCP server with only the legacy HTTP+SSE transport (2024-11-05): the official SDK's own SSEServerTransport
// (GET /sse opens a session's stream, POST /messages?sessionId= carries the client's messages) and an SDK McpServer
// with tools echo, notify (progress, then an answer), slow (never answers) and ask (asks the client to sample). It
// checks the credential the gateway must inject and counts its open SSE streams and initialize requests.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { z } from 'zod';

export interface LegacyUpstream {
  /** The SSE URL an McpServer with transport sse points at. */
  url: string;
  /** SSE streams still open (a client gone through the gateway must leave none). */
  openStreams(): number;
  /** initialize requests received (the gateway replays one per request). */
  initializes(): number;
  /** tools/call requests received, by tool. */
  calls: string[];
  /** What the ask tool's sampling request got back. */
  asked: string[];
  close(): Promise<void>;
}

export async function startLegacyUpstream(token: string): Promise<LegacyUpstream> {
  const transports = new Map<string, SSEServerTransport>();
  const calls: string[] = [];
  const asked: string[] = [];
  let open = 0;
  let initializes = 0;
  const build = (): McpServer => {
    const s = new McpServer({ name: 'legacy-sse-upstream', version: '1.0.0' });
    s.registerTool('echo', { description: 'echoes text', inputSchema: { text: z.string() } }, async ({ text }) => {
      calls.push('echo');
      return { content: [{ type: 'text', text }] };
    });
    s.registerTool('notify', { description: 'progress then an answer' }, async (extra) => {
      calls.push('notify');
      const progressToken = extra._meta?.progressToken;
      if (progressToken !== undefined)
        for (let i = 1; i <= 3; i++) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress: i, total: 3 } });
      return { content: [{ type: 'text', text: 'notified' }] };
    });
    s.registerTool('slow', { description: 'never answers' }, (extra) => {
      calls.push('slow');
      return new Promise((_resolve, reject) => extra.signal.addEventListener('abort', () => reject(new Error('cancelled'))));
    });
    s.registerTool('ask', { description: 'asks the client to sample' }, async () => {
      calls.push('ask');
      try {
        await s.server.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 5 });
        asked.push('answered');
      } catch (err) {
        asked.push(err instanceof Error ? err.message : String(err));
      }
      return { content: [{ type: 'text', text: 'asked' }] };
    });
    return s;
  };
  const server: Server = createServer((req, res) => {
    if (req.headers.authorization !== `Bearer ${token}`) {
      res.writeHead(401).end('unauthorized');
      return;
    }
    const url = new URL(req.url ?? '/', 'http://x');
    void (async () => {
      if (req.method === 'GET' && url.pathname === '/sse') {
        const t = new SSEServerTransport('/messages', res);
        transports.set(t.sessionId, t);
        open++;
        res.on('close', () => {
          open--;
          transports.delete(t.sessionId);
        });
        await build().connect(t);
        return;
      }
      const t = transports.get(url.searchParams.get('sessionId') ?? '');
      if (req.method === 'POST' && url.pathname === '/messages' && t) {
        const chunks: Buffer[] = [];
        for await (const c of req) chunks.push(c as Buffer);
        const body: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        if ((body as { method?: string }).method === 'initialize') initializes++;
        await t.handlePostMessage(req, res, body);
        return;
      }
      res.writeHead(404).end();
    })();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/sse`,
    openStreams: () => open,
    initializes: () => initializes,
    calls,
    asked,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
