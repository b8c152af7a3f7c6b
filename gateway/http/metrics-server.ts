// The internal HTTP port of a process: /metrics for Prometheus, /healthz (alive), /readyz. Kept off the API port
// (issue 18: the gateway's metrics list every account's balance): the gateway serves it on SVC_METRICS_PORT, the
// usage exporter on its PORT. Plain node:http, no framework: nothing here reads a request body.
import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';
import { renderer, type Render } from './exposition.ts';
import { listenHost } from '../lifecycle/listen-host.ts';

/** What /readyz answers: true (200 ready), false (503 starting), 'draining' (503 draining, after SIGTERM). */
export type Readiness = () => boolean | 'draining';

export interface MetricsServer {
  server: Server;
  port: number;
  /** Stops listening and ends its connections (a Prometheus scrape keeps one alive). */
  close(): Promise<void>;
}

/** `render`: how a scrape is answered (exposition.ts; default: the registry in Prometheus' text format). */
export async function serveMetrics(
  registry: Registry,
  port: number,
  host: string,
  ready: Readiness = () => true,
  render: Render = renderer(registry, false),
): Promise<MetricsServer> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') return void res.writeHead(405, { allow: 'GET, HEAD' }).end();
    if (path === '/metrics') {
      render(req.headers.accept).then(
        ({ contentType, text }) => res.writeHead(200, { 'content-type': contentType }).end(text),
        (err: unknown) => res.writeHead(500).end(String(err)),
      );
      return;
    }
    if (path === '/healthz') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
    if (path === '/readyz') {
      const r = ready();
      const status = r === 'draining' ? 'draining' : r ? 'ready' : 'starting';
      return void res.writeHead(r === true ? 200 : 503, { 'content-type': 'application/json' }).end(JSON.stringify({ status }));
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address();
  return {
    server,
    port: typeof addr === 'object' && addr ? addr.port : port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export const DEFAULT_METRICS_PORT = 9090;

/** SVC_METRICS_PORT (9090; 0 = any free port) and SVC_METRICS_HOST (default: HOST, else 127.0.0.1). */
export function metricsListen(env: Record<string, string | undefined>): { port: number; host: string } {
  const v = env.SVC_METRICS_PORT;
  let port = DEFAULT_METRICS_PORT;
  if (v !== undefined && v !== '') {
    port = Number(v);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw new Error(`SVC_METRICS_PORT must be a port number (0-65535; 0 = any free port), got ${JSON.stringify(v)}`);
  }
  return { port, host: env.SVC_METRICS_HOST || listenHost(env) };
}

/** The gateway's metrics listener (metricsListen's port and host); a readable Error when it cannot listen. */
export async function serveGatewayMetrics(
  registry: Registry,
  listen: { port: number; host: string },
  ready: Readiness,
  openMetrics = false,
): Promise<MetricsServer & { url: string }> {
  const { port, host } = listen;
  let srv: MetricsServer;
  try {
    srv = await serveMetrics(registry, port, host, ready, renderer(registry, openMetrics));
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new Error(`Cannot serve metrics on ${host}:${port} (${why}); set SVC_METRICS_PORT to a free port`, { cause: err });
  }
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return { ...srv, url: `http://${shown}:${srv.port}` };
}
