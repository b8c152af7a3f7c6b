// The HTTP side both fake providers share: a server on 127.0.0.1 (or another local address: the e2e node's bridge) that records each call (path, headers, JSON body,
// whether the client went away) and hands it to the fake's own answer.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface RecordedCall {
  path: string;
  method: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
  aborted: boolean;
}

export interface RecordingServer {
  url: string;
  calls: RecordedCall[];
  /** Requests received whose answer has not closed yet (ended, or cut by either side). */
  readonly open: number;
  /** TCP connections open to this server, as the server sees them (idle keep-alive connections included). */
  readonly sockets: number;
  close(): Promise<void>;
}

export async function startRecordingServer(onCall: (call: RecordedCall, res: ServerResponse) => void, host = '127.0.0.1'): Promise<RecordingServer> {
  const sockets = new Set<Socket>();
  const calls: RecordedCall[] = [];
  let open = 0;
  const server = createServer((req, res) => {
    open++;
    res.once('close', () => open--);
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (raw += c));
    req.on('end', () => {
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        /* recorded as empty */
      }
      const call: RecordedCall = { path: req.url ?? '', method: req.method ?? 'GET', headers: req.headers, body, aborted: false };
      calls.push(call);
      res.on('close', () => {
        if (!res.writableFinished) call.aborted = true;
      });
      onCall(call, res);
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, host, () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    calls,
    get open() {
      return open;
    },
    get sockets() {
      return sockets.size;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
