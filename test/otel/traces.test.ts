// Traces through a real OpenTelemetry Collector: a gateway process with OTEL_EXPORTER_OTLP_ENDPOINT exports one
// SERVER span per call, in the caller's trace when it sends a W3C traceparent, with a CLIENT child span per upstream
// attempt (a fallback is a failed sibling before the one that answered), the GenAI semantic-convention attributes,
// and never the API key in any attribute or resource value.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../fakes/upstream.ts';
import { writeManifests } from '../helpers/fleet.ts';
import { basics, route } from '../helpers/manifests.ts';
import { startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';
import { metricSum, scrape } from '../helpers/prom.ts';
import { checkMetrics } from '../helpers/promtool.ts';
import { freePort } from '../helpers/redis.ts';
import { until } from '../helpers/until.ts';
import { startCollector, type ExportedSpan, type TestCollector } from './collector.ts';

let primary: FakeUpstream;
let secondary: FakeUpstream;
let collector: TestCollector;
let gw: GatewayProcess;
let key: string;
let config: string;

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';
const fast = { connectMs: 300, firstByteMs: 2000, idleMs: 2000, totalMs: 5000 };

beforeAll(async () => {
  [primary, secondary, collector] = await Promise.all([startFakeUpstream('primary'), startFakeUpstream('secondary'), startCollector()]);
  const b = basics();
  key = b.keys.builder;
  const docs = [
    ...b.docs,
    route('smart', [
      { name: 'primary', provider: 'openai', baseUrl: primary.baseUrl, weight: 1, timeouts: fast },
      { name: 'secondary', provider: 'openai', baseUrl: secondary.baseUrl, weight: 0, timeouts: fast },
    ]),
  ];
  config = writeManifests(docs);
  gw = await startGatewayProcess({
    SVC_CONFIG: config,
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
    OTEL_RESOURCE_ATTRIBUTES: 'k8s.pod.name=gateway-0,k8s.namespace.name=svc',
    LOG_LEVEL: 'warn',
  });
}, 120_000);

afterAll(async () => {
  await gw?.stop();
  await Promise.allSettled([collector?.stop(), primary?.close(), secondary?.close()]);
});

const chat = (headers: Record<string, string>, stream = false): Promise<Response> =>
  fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'smart', stream, messages: [{ role: 'user', content: 'hi' }] }),
  });
const inTrace = (traceId: string): ExportedSpan[] => collector.spans.filter((s) => s.traceId === traceId);
const SERVER = 2;
const CLIENT = 3;

describe('a call through a gateway with OTEL_EXPORTER_OTLP_ENDPOINT set', () => {
  it("is one server span in the caller's trace, a child per attempt: the failed primary, then the secondary", async () => {
    primary.fallback = () => ({ kind: 'status', status: 500 });
    const res = await chat({ traceparent: `00-${TRACE}-${PARENT}-01` });
    expect(res.status).toBe(200);
    await res.text();
    await until(async () => inTrace(TRACE).length >= 3, 15_000, 'three spans of the trace at the collector');
    const spans = inTrace(TRACE);
    const server = spans.filter((s) => s.kind === SERVER);
    expect(server).toHaveLength(1);
    const call = server[0] as ExportedSpan;
    expect(call.parentSpanId).toBe(PARENT);
    expect(call.name).toBe('chat smart');
    expect(call.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'smart',
      'gen_ai.response.model': 'smart',
      'gen_ai.usage.input_tokens': 11,
      'gen_ai.usage.output_tokens': 7,
      'http.response.status_code': 200,
      'svc.account': 'acme',
      'svc.api_key.name': 'builder-key',
      'svc.fallback.reason': 'upstream_5xx',
    });
    expect(call.resource).toMatchObject({ 'service.name': 'svc-gateway', 'k8s.pod.name': 'gateway-0', 'k8s.namespace.name': 'svc' });
    const attempts = spans.filter((s) => s.kind === CLIENT);
    expect(attempts.map((s) => [s.parentSpanId, s.attributes['svc.target'], s.attributes['error.type'] ?? null])).toEqual([
      [call.spanId, 'primary', 'upstream_5xx'],
      [call.spanId, 'secondary', null],
    ]);
    for (const a of attempts) {
      expect(a.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'openai', 'server.address': '127.0.0.1' });
    }
    expect(attempts[0]?.status.code).toBe(2); // ERROR
  });

  it('starts a trace of its own without traceparent; a refused call is a span with error.type', async () => {
    primary.fallback = () => ({ kind: 'reply' });
    const before = new Set(collector.spans.map((s) => s.traceId));
    expect((await chat({}, true)).status).toBe(200);
    // Refused in the pipeline (a malformed key is refused before the body is read, untraced: no call began).
    const bad = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(bad.status).toBe(404);
    await until(async () => collector.spans.filter((s) => !before.has(s.traceId) && s.kind === SERVER).length >= 2, 15_000, 'two new server spans');
    const roots = collector.spans.filter((s) => !before.has(s.traceId) && s.kind === SERVER);
    for (const r of roots) expect(r.parentSpanId || '').toBe('');
    const refused = roots.find((r) => r.attributes['http.response.status_code'] === 404);
    expect(refused?.name).toBe('chat no-such-model');
    expect(refused?.attributes['error.type']).toBe('model_not_found');
    const streamed = roots.find((r) => r.attributes['http.response.status_code'] === 200);
    expect(streamed?.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
  });

  it('a collector that is down fails no call: spans are dropped from a bounded queue', async () => {
    const nobody = `http://127.0.0.1:${await freePort()}`;
    const g = await startGatewayProcess({ SVC_CONFIG: config, OTEL_EXPORTER_OTLP_ENDPOINT: nobody, LOG_LEVEL: 'warn' });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 20; i++) {
        const res = await fetch(`${g.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'smart', messages: [{ role: 'user', content: `hi ${i}` }] }),
        });
        await res.text();
        statuses.push(res.status);
      }
      expect(statuses).toEqual(Array(20).fill(200));
      // Each call's server and attempt spans: failed to export (or dropped), counted, none exported.
      const spans = async (result: string): Promise<number> => metricSum(await scrape(g.metricsUrl), 'svc_gateway_trace_spans_total', { result });
      await until(async () => (await spans('failed')) + (await spans('dropped')) >= 40, 20_000, 'forty spans failed or dropped');
      expect(await spans('exported')).toBe(0);
    } finally {
      await g.stop();
    }
  });

  it('counts the spans it exported', async () => {
    const exported = async (): Promise<number> => metricSum(await scrape(gw.metricsUrl), 'svc_gateway_trace_spans_total', { result: 'exported' });
    await until(async () => (await exported()) >= collector.spans.length, 10_000, 'every span the collector forwarded counted as exported');
    expect(await exported()).toBe(collector.spans.length);
    // The scrape of a gateway with tracing on stays promtool-clean (the process-metrics test covers it off).
    const lint = await checkMetrics(await scrape(gw.metricsUrl));
    expect(lint.output.trim()).toBe('');
    expect(lint.code).toBe(0);
  });

  it('puts the key in no attribute and no resource value of any exported span', () => {
    expect(collector.spans.length).toBeGreaterThanOrEqual(5);
    const everything = JSON.stringify(collector.spans);
    expect(everything).not.toContain(key);
    expect(everything).not.toContain(key.slice(-12));
  });
});
