// The HTTP side of the fake content services: a loopback server that keeps each call (path, headers, raw body, JSON
// body) and answers from a script (enqueued answers first, else the fake's own judgement): JSON, raw text with a
// status, or no answer at all (hang: a stalled service, for timeouts).
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface ServiceCall {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  raw: Buffer;
  body: Record<string, unknown>;
}

export type Answer = { status?: number; json: unknown } | { status: number; raw: string; contentType?: string } | { hang: true };

export interface JsonFake {
  url: string;
  calls: ServiceCall[];
  enqueue(...answers: Answer[]): void;
  close(): Promise<void>;
}

export async function startJsonFake(decide: (call: ServiceCall) => Answer | Promise<Answer>): Promise<JsonFake> {
  const sockets = new Set<Socket>();
  const calls: ServiceCall[] = [];
  const queue: Answer[] = [];
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(parts);
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
      } catch {
        /* kept as empty */
      }
      const call: ServiceCall = { method: req.method ?? 'GET', path: req.url ?? '', headers: req.headers, raw, body };
      calls.push(call);
      void Promise.resolve(queue.shift() ?? decide(call)).then((a) => {
        if ('hang' in a) return;
        if ('raw' in a) {
          res.writeHead(a.status, { 'content-type': a.contentType ?? 'text/plain' });
          res.end(a.raw);
          return;
        }
        res.writeHead(a.status ?? 200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(a.json));
      });
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    enqueue: (...a) => queue.push(...a),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
