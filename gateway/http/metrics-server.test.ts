import { Registry, Counter } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { metricsListen, serveGatewayMetrics, serveMetrics, type MetricsServer } from './metrics-server.ts';

const open: MetricsServer[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

async function get(port: number, path: string, method = 'GET'): Promise<{ status: number; text: string; type: string | null }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { method });
  return { status: res.status, text: await res.text(), type: res.headers.get('content-type') };
}

describe('the metrics port', () => {
  it('serves the registry on /metrics, /healthz, and /readyz as the readiness function says (starting, ready, draining)', async () => {
    const registry = new Registry();
    new Counter({ name: 'svc_test_total', help: 'a counter', registers: [registry] }).inc(3);
    let state: boolean | 'draining' = false;
    const srv = await serveMetrics(registry, 0, '127.0.0.1', () => state);
    open.push(srv);
    const m = await get(srv.port, '/metrics');
    expect([m.status, m.type]).toEqual([200, registry.contentType]);
    expect(m.text).toContain('svc_test_total 3');
    expect((await get(srv.port, '/healthz')).status).toBe(200);
    expect(await get(srv.port, '/readyz')).toMatchObject({ status: 503, text: '{"status":"starting"}' });
    state = true;
    expect(await get(srv.port, '/readyz')).toMatchObject({ status: 200, text: '{"status":"ready"}' });
    state = 'draining';
    expect(await get(srv.port, '/readyz')).toMatchObject({ status: 503, text: '{"status":"draining"}' });
    expect((await get(srv.port, '/v1/models')).status).toBe(404);
    expect((await get(srv.port, '/metrics', 'POST')).status).toBe(405);
    expect((await get(srv.port, '/metrics', 'HEAD')).status).toBe(200);
  });

  it('is ready by default', async () => {
    const srv = await serveMetrics(new Registry(), 0, '127.0.0.1');
    open.push(srv);
    expect((await get(srv.port, '/readyz')).status).toBe(200);
  });

  it('reads SVC_METRICS_PORT (9090; 0 = any) and SVC_METRICS_HOST (default HOST, else 127.0.0.1), refusing a bad port', () => {
    expect(metricsListen({})).toEqual({ port: 9090, host: '127.0.0.1' });
    expect(metricsListen({ HOST: '0.0.0.0', SVC_METRICS_PORT: '0' })).toEqual({ port: 0, host: '0.0.0.0' });
    expect(metricsListen({ HOST: '127.0.0.1', SVC_METRICS_HOST: '10.0.0.5', SVC_METRICS_PORT: '9100' })).toEqual({ port: 9100, host: '10.0.0.5' });
    for (const bad of ['x', '-1', '65536', '80.5']) expect(() => metricsListen({ SVC_METRICS_PORT: bad })).toThrow(/SVC_METRICS_PORT must be a port number/);
  });

  it('names the address when the port is taken', async () => {
    const first = await serveGatewayMetrics(new Registry(), metricsListen({ SVC_METRICS_PORT: '0', SVC_METRICS_HOST: '127.0.0.1' }), () => true);
    open.push(first);
    expect(first.url).toBe(`http://127.0.0.1:${first.port}`);
    await expect(
      serveGatewayMetrics(new Registry(), metricsListen({ SVC_METRICS_PORT: String(first.port), SVC_METRICS_HOST: '127.0.0.1' }), () => true),
    ).rejects.toThrow(`Cannot serve metrics on 127.0.0.1:${first.port}`);
  });
});
