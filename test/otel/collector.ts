// A real OpenTelemetry Collector for a test (otelcol-svc, built by install-collector.sh from the Go module proxy and
// cached; SVC_OTELCOL names one of your own): an OTLP receiver on a free loopback port, and an OTLP/HTTP exporter in
// JSON to a listener of this helper, which keeps every span the collector forwarded. Never skipped.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { freePort } from '../helpers/redis.ts';

const INSTALL = fileURLToPath(new URL('./install-collector.sh', import.meta.url));

export interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values: OtlpValue[] };
}
export interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, string | number | boolean | string[]>;
  status: { code?: number };
  resource: Record<string, string | number | boolean | string[]>;
}

export interface TestCollector {
  /** OTEL_EXPORTER_OTLP_ENDPOINT for a process (OTLP/HTTP). */
  endpoint: string;
  /** The OTLP/gRPC receiver, as a URL (OTEL_EXPORTER_OTLP_ENDPOINT with OTEL_EXPORTER_OTLP_PROTOCOL=grpc). */
  grpcEndpoint: string;
  spans: ExportedSpan[];
  stop(): Promise<void>;
}

function collectorBinary(): string {
  if (process.env.SVC_OTELCOL) return process.env.SVC_OTELCOL;
  const bin = join(process.env.SVC_TOOLS_BIN || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'svc-gateway', 'bin'), 'otelcol-svc');
  if (!existsSync(bin)) {
    const r = spawnSync('bash', [INSTALL], { encoding: 'utf8' });
    if (r.status !== 0)
      throw new Error(`No OpenTelemetry Collector: ${INSTALL} failed (it needs Go and the Go module proxy), or set SVC_OTELCOL:\n${r.stderr}${r.stdout}`);
  }
  return bin;
}

const value = (v: OtlpValue): string | number | boolean | string[] =>
  v.stringValue ??
  (v.intValue !== undefined ? Number(v.intValue) : undefined) ??
  v.doubleValue ??
  v.boolValue ??
  (v.arrayValue?.values ?? []).map((x) => String(value(x)));
const attrs = (list: Array<{ key: string; value: OtlpValue }> = []): ExportedSpan['attributes'] => Object.fromEntries(list.map((a) => [a.key, value(a.value)]));

interface OtlpJson {
  resourceSpans?: Array<{
    resource?: { attributes?: Array<{ key: string; value: OtlpValue }> };
    scopeSpans?: Array<{ spans?: Array<Omit<ExportedSpan, 'attributes' | 'resource'> & { attributes?: Array<{ key: string; value: OtlpValue }> }> }>;
  }>;
}

export async function startCollector(): Promise<TestCollector> {
  const bin = collectorBinary();
  const spans: ExportedSpan[] = [];
  const sink: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const msg = JSON.parse(body) as OtlpJson;
      for (const rs of msg.resourceSpans ?? []) {
        const resource = attrs(rs.resource?.attributes);
        for (const ss of rs.scopeSpans ?? [])
          for (const s of ss.spans ?? []) spans.push({ ...s, attributes: attrs(s.attributes), status: s.status ?? {}, resource });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
  const sinkPort = (sink.address() as { port: number }).port;
  const [grpcPort, httpPort] = [await freePort(), await freePort()];
  const dir = mkdtempSync(join(tmpdir(), 'svc-otelcol-'));
  const config = join(dir, 'config.yaml');
  writeFileSync(
    config,
    stringify({
      receivers: { otlp: { protocols: { grpc: { endpoint: `127.0.0.1:${grpcPort}` }, http: { endpoint: `127.0.0.1:${httpPort}` } } } },
      exporters: { otlp_http: { endpoint: `http://127.0.0.1:${sinkPort}`, encoding: 'json', compression: 'none', retry_on_failure: { enabled: false } } },
      service: { telemetry: { metrics: { level: 'none' } }, pipelines: { traces: { receivers: ['otlp'], exporters: ['otlp_http'] } } },
    }),
  );
  const child: ChildProcess = spawn(bin, [`--config=${config}`], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const endpoint = `http://127.0.0.1:${httpPort}`;
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`otelcol-svc exited with ${code}:\n${out}`)));
    const end = Date.now() + 20_000;
    const poll = (): void => {
      // The OTLP/HTTP receiver answers an empty export once it listens.
      void fetch(`${endpoint}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
        .then(
          (r) => r.ok,
          () => false,
        )
        .then((ok) => {
          if (ok) resolve();
          else if (Date.now() > end) reject(new Error(`otelcol-svc not ready in 20 s:\n${out}`));
          else setTimeout(poll, 100);
        });
    };
    poll();
  });
  return {
    endpoint,
    grpcEndpoint: `http://127.0.0.1:${grpcPort}`,
    spans,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      await new Promise<void>((r) => sink.close(() => r()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
