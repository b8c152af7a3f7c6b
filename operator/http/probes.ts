// /healthz (the process runs), /readyz (it can do its job: a standby is ready to take over, a leader once its
// caches are synced) and /metrics (Prometheus), on PORT.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { listenHost } from '../../gateway/lifecycle/listen-host.ts';

export interface ProbeState {
  healthy: () => boolean;
  ready: () => boolean;
}

export interface ProbeServer {
  port: number;
  close(): Promise<void>;
}

export async function startProbes(port: number, state: ProbeState, registry: Registry): Promise<ProbeServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const send = (code: number, body: string, type = 'application/json'): void => {
      res.writeHead(code, { 'content-type': type }).end(body);
    };
    if (req.method !== 'GET') return send(405, '{"error":"method not allowed"}');
    if (path === '/healthz') return state.healthy() ? send(200, '{"status":"ok"}') : send(503, '{"status":"unhealthy"}');
    if (path === '/readyz') return state.ready() ? send(200, '{"status":"ready"}') : send(503, '{"status":"starting"}');
    if (path === '/metrics') {
      void registry.metrics().then(
        (text) => send(200, text, registry.contentType),
        () => send(500, '{"error":"metrics failed"}'),
      );
      return;
    }
    send(404, '{"error":"not found"}');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, listenHost(process.env), () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
