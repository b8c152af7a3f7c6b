// The three OTLP protocols against a real OpenTelemetry Collector (its OTLP receiver speaks HTTP and gRPC), each
// set the standard way: OTEL_EXPORTER_OTLP_PROTOCOL (or the _TRACES_ form), the generic endpoint (/v1/traces
// appended for HTTP; a URL for gRPC) or the traces-specific one used as it is, and OTEL_EXPORTER_OTLP_HEADERS sent
// with every export (seen by a recording hop in front of the collector: HTTP/1.1 for the HTTP protocols, HTTP/2 for
// gRPC). Also: a gateway without tracing loads no OpenTelemetry module at all.
import { spawnSync } from 'node:child_process';
import { createServer, request, type Server } from 'node:http';
import http2 from 'node:http2';
import { createServer as createNetServer } from 'node:net';
import { metricSum, scrape } from '../helpers/prom.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../fakes/upstream.ts';
import { writeManifests } from '../helpers/fleet.ts';
import { basics, route } from '../helpers/manifests.ts';
import { ROOT, startGatewayProcess } from '../helpers/process.ts';
import { until } from '../helpers/until.ts';
import { startCollector, type ExportedSpan, type TestCollector } from './collector.ts';
import { docExample } from '../helpers/docs.ts';

let upstream: FakeUpstream;
let collector: TestCollector;
let key: string;
let config: string;

beforeAll(async () => {
  [upstream, collector] = await Promise.all([startFakeUpstream('proto-up'), startCollector()]);
  const b = basics();
  key = b.keys.builder;
  config = writeManifests([...b.docs, route('smart', [{ name: 'up', provider: 'openai', baseUrl: upstream.baseUrl }])]);
}, 120_000);

afterAll(async () => {
  await Promise.allSettled([collector?.stop(), upstream?.close()]);
});

/** An HTTP/1.1 hop to the collector's OTLP/HTTP receiver that keeps each request's path and headers. */
async function httpHop(seen: Array<{ path: string; headers: Record<string, unknown> }>): Promise<{ url: string; close(): Promise<void> }> {
  const target = new URL(collector.endpoint);
  const server: Server = createServer((req, res) => {
    seen.push({ path: req.url ?? '', headers: req.headers });
    const up = request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    req.pipe(up);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, close: () => new Promise((r) => server.close(() => r())) };
}

/** An HTTP/2 hop to the collector's OTLP/gRPC receiver that keeps each call's headers (gRPC metadata). */
async function grpcHop(seen: Array<Record<string, unknown>>): Promise<{ url: string; close(): Promise<void> }> {
  const server = http2.createServer();
  const sessions = new Set<http2.ClientHttp2Session>();
  server.on('stream', (stream, headers) => {
    seen.push(headers);
    const client = http2.connect(collector.grpcEndpoint);
    sessions.add(client);
    const fwd: http2.OutgoingHttpHeaders = {};
    for (const [k, v] of Object.entries(headers)) if ((!k.startsWith(':') || k === ':path' || k === ':method') && v !== undefined) fwd[k] = v;
    const up = client.request(fwd);
    const trailers: http2.OutgoingHttpHeaders = {};
    up.on('response', (h) => {
      const out: http2.OutgoingHttpHeaders = {};
      for (const [k, v] of Object.entries(h)) if (!k.startsWith(':') || k === ':status') out[k] = v;
      stream.respond(out, { waitForTrailers: true });
    });
    up.on('trailers', (t) => {
      for (const [k, v] of Object.entries(t)) if (!k.startsWith(':') && v !== undefined) trailers[k] = v as string | string[];
    });
    stream.on('wantTrailers', () => (Object.keys(trailers).length > 0 ? stream.sendTrailers(trailers) : stream.close()));
    stream.pipe(up);
    up.pipe(stream);
    up.on('close', () => {
      client.close();
      sessions.delete(client);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    close: async () => {
      for (const s of sessions) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

async function tracedCall(env: Record<string, string>, marker: string): Promise<ExportedSpan[]> {
  const gw = await startGatewayProcess({ SVC_CONFIG: config, LOG_LEVEL: 'warn', OTEL_SERVICE_NAME: marker, ...env });
  try {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'smart', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(200);
    await res.text();
    const mine = (): number => collector.spans.filter((s) => s.resource['service.name'] === marker).length;
    await until(() => mine() >= 2, 15_000, `the server and client spans of ${marker} at the collector`);
    const spans = collector.spans.filter((s) => s.resource['service.name'] === marker);
    expect(spans.map((s) => s.name).sort()).toEqual(['chat smart', 'chat smart']);
    return spans;
  } finally {
    await gw.stop();
  }
}

describe('OTLP protocols, endpoints and headers as the OpenTelemetry specification sets them', () => {
  it('http/json with the generic endpoint: /v1/traces appended, the headers sent', async () => {
    const seen: Array<{ path: string; headers: Record<string, unknown> }> = [];
    const hop = await httpHop(seen);
    try {
      await tracedCall(
        {
          OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
          OTEL_EXPORTER_OTLP_ENDPOINT: hop.url,
          OTEL_EXPORTER_OTLP_HEADERS: 'x-tenant=acme,authorization=Basic%20dGVzdA==',
        },
        'svc-json',
      );
    } finally {
      await hop.close();
    }
    expect(seen.length).toBeGreaterThan(0);
    for (const r of seen) {
      expect(r.path).toBe('/v1/traces');
      expect(r.headers).toMatchObject({ 'content-type': 'application/json', 'x-tenant': 'acme', authorization: 'Basic dGVzdA==' });
    }
  });

  it('http/protobuf (the default) with the traces endpoint used as it is, and the traces headers', async () => {
    const seen: Array<{ path: string; headers: Record<string, unknown> }> = [];
    const hop = await httpHop(seen);
    try {
      await tracedCall({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${hop.url}/v1/traces`, OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-tenant=traces' }, 'svc-proto');
    } finally {
      await hop.close();
    }
    expect(seen.length).toBeGreaterThan(0);
    for (const r of seen) expect(r).toMatchObject({ path: '/v1/traces', headers: { 'content-type': 'application/x-protobuf', 'x-tenant': 'traces' } });
  });

  it('grpc (OTEL_EXPORTER_OTLP_TRACES_PROTOCOL) straight to the receiver', async () => {
    await tracedCall({ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_ENDPOINT: collector.grpcEndpoint }, 'svc-grpc');
  });

  it("the documented settings: grpc, the headers as gRPC metadata, and the latest GenAI conventions' attributes", async () => {
    const seen: Array<Record<string, unknown>> = [];
    const hop = await grpcHop(seen);
    let spans: ExportedSpan[];
    try {
      // docs/operations.md's example settings, its collector address replaced by the hop's.
      const env = Object.fromEntries(
        docExample('docs/operations.md', 'otel-env')
          .trim()
          .split('\n')
          .map((l) => l.split(/=(.*)/s).slice(0, 2) as [string, string]),
      );
      expect(env).toMatchObject({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_SEMCONV_STABILITY_OPT_IN: 'gen_ai_latest_experimental' });
      spans = await tracedCall({ ...env, OTEL_EXPORTER_OTLP_ENDPOINT: hop.url }, 'svc-grpc-hop');
    } finally {
      await hop.close();
    }
    expect(seen.length).toBeGreaterThan(0);
    for (const h of seen) {
      expect(h[':path']).toBe('/opentelemetry.proto.collector.trace.v1.TraceService/Export');
      expect(h['x-scope-orgid']).toBe('platform');
    }
    // gen_ai_latest_experimental: the usage attributes the registry gained after v1.37, on both spans.
    for (const s of spans) expect(s.attributes).toMatchObject({ 'gen_ai.usage.cache_read.input_tokens': 0, 'gen_ai.usage.cache_creation.input_tokens': 0 });
  });

  it('emits v1.37.0 without the opt-in: no attribute the registry gained later', async () => {
    const spans = await tracedCall({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint }, 'svc-v137');
    for (const s of spans) expect(Object.keys(s.attributes).filter((k) => k.startsWith('gen_ai.usage.cache'))).toEqual([]);
    expect(spans.find((s) => s.kind === 3)?.attributes).toMatchObject({ 'gen_ai.provider.name': 'openai', 'gen_ai.usage.output_tokens': 7 });
  });

  it.each(['http/protobuf', 'http/json', 'grpc'])(
    '%s: an export that gets no answer fails after OTEL_EXPORTER_OTLP_TIMEOUT, the call never waits',
    async (protocol) => {
      // A collector address that accepts connections and never answers (nor completes an HTTP/2 handshake).
      const sockets = new Set<import('node:net').Socket>();
      const silent = createNetServer((sock) => sockets.add(sock));
      await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
      const url = `http://127.0.0.1:${(silent.address() as { port: number }).port}`;
      const gw = await startGatewayProcess({
        SVC_CONFIG: config,
        LOG_LEVEL: 'error',
        OTEL_EXPORTER_OTLP_ENDPOINT: url,
        OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
        OTEL_EXPORTER_OTLP_TIMEOUT: '300',
      });
      try {
        const res = await fetch(`${gw.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'smart', messages: [{ role: 'user', content: 'hi' }] }),
        });
        expect(res.status).toBe(200);
        await res.text();
        // Well before the 10 s default: the batch is exported after 1 s, and fails 300 ms later.
        const failed = async (): Promise<number> => metricSum(await scrape(gw.metricsUrl), 'svc_gateway_trace_spans_total', { result: 'failed' });
        await until(async () => (await failed()) >= 2, 6_000, `the ${protocol} export failed after its timeout`, 100);
      } finally {
        await gw.stop();
        for (const s of sockets) s.destroy();
        await new Promise<void>((r) => silent.close(() => r()));
      }
    },
  );

  it('refuses a protocol it does not know at start, saying which it takes', async () => {
    await expect(
      startGatewayProcess({ SVC_CONFIG: config, OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/thrift' }),
    ).rejects.toThrow(/http\/protobuf, http\/json, grpc/);
  });

  it('loads no OpenTelemetry module in a gateway without tracing, and only the configured exporter with it', () => {
    // Every OpenTelemetry (and gRPC) package the gateway's entry points import, as node resolves them.
    const script = `
      import { registerHooks } from 'node:module';
      const seen = new Set();
      registerHooks({ resolve(spec, ctx, next) {
        const r = next(spec, ctx);
        const m = /node_modules\\/(@opentelemetry\\/[^/]+|@grpc\\/[^/]+)/.exec(r.url);
        // prom-client's own process metrics require @opentelemetry/api (the API alone, no SDK): not ours to load.
        const from = ctx.parentURL ?? '';
        if (m && !from.includes('/node_modules/' + m[1] + '/') && !from.includes('/node_modules/prom-client/')) seen.add(m[1]);
        return r;
      } });
      await import('./gateway/standalone-mode.ts');
      await import('./gateway/cluster-mode.ts');
      const before = [...seen];
      const { startTracing } = await import('./gateway/tracing/start.ts');
      const sdk = await startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_EXPORTER_OTLP_PROTOCOL: process.argv[1] }, 'svc-gateway');
      await sdk.shutdown();
      console.log(JSON.stringify({ before, after: [...seen] }));`;
    const run = (protocol: string): { before: string[]; after: string[] } => {
      const r = spawnSync(process.execPath, ['--input-type=module', '-e', script, protocol], { cwd: ROOT, encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
      return JSON.parse(r.stdout.trim().split('\n').at(-1) ?? '{}') as { before: string[]; after: string[] };
    };
    const json = run('http/json');
    expect(json.before).toEqual([]);
    expect(json.after).toContain('@opentelemetry/exporter-trace-otlp-http');
    expect(json.after).not.toContain('@opentelemetry/exporter-trace-otlp-grpc');
    expect(json.after).not.toContain('@grpc/grpc-js');
    const grpc = run('grpc');
    expect(grpc.before).toEqual([]);
    expect(grpc.after).toContain('@opentelemetry/exporter-trace-otlp-grpc');
    expect(grpc.after).not.toContain('@opentelemetry/exporter-trace-otlp-proto');
  });
});
