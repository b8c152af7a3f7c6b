// The bench's fake MCP server (Streamable HTTP, stateless, JSON answers), as cheap as node:http allows so that it
// is never the bottleneck: initialize, ping and tools/call answered with a fixed result, notifications taken (202).
// Run as its own process: node test/bench/mcp-upstream.ts; prints "listening PORT".
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const RESULTS: Record<string, object> = {
  initialize: { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'bench-mcp', version: '1.0.0' } },
  ping: {},
  'tools/list': { tools: [{ name: 'lookup', description: 'A fixed answer.', inputSchema: { type: 'object', properties: {} } }] },
  'tools/call': { content: [{ type: 'text', text: 'A fixed answer from the bench MCP server, about as long as a short tool result.' }] },
};

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    let m: { id?: unknown; method?: string } = {};
    try {
      m = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof m;
    } catch {
      res.writeHead(400).end();
      return;
    }
    if (m.id === undefined) {
      res.writeHead(202).end();
      return;
    }
    const result = RESULTS[m.method ?? ''];
    const body = result
      ? { jsonrpc: '2.0', id: m.id, result }
      : { jsonrpc: '2.0', id: m.id, error: { code: -32601, message: `Method not found: ${String(m.method)}` } };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`));
