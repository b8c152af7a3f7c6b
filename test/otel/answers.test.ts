// What the attempt spans say of each answer, through a real OpenTelemetry Collector: gen_ai.response.id and
// gen_ai.response.finish_reasons as the upstream gave them, whole or streamed, in every dialect (OpenAI chat,
// Anthropic messages, the Responses API; passed through or translated), the usage set when the answer (the stream)
// is over; prompts and completions only on a ModelRoute with spec.tracing.captureContent, redacted of every secret
// (the caller's own key among them: the key canary extends to captured content); and the latency histograms' trace_id
// exemplars for an OpenMetrics scrape.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, ANTHROPIC_FAKE_REPLY, type FakeAnthropic } from '../fakes/anthropic-upstream.ts';
import { startFakeUpstream, type FakeUpstream } from '../fakes/upstream.ts';
import { writeManifests } from '../helpers/fleet.ts';
import { basics, route, secret } from '../helpers/manifests.ts';
import { startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';
import { checkMetrics } from '../helpers/promtool.ts';
import { until } from '../helpers/until.ts';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHART } from '../chart/helm.ts';
import { startPrometheus } from '../chart/prometheus.ts';
import { startCollector, type ExportedSpan, type TestCollector } from './collector.ts';
import { parse } from 'yaml';
import { docExample } from '../helpers/docs.ts';

let openai: FakeUpstream;
let anthropic: FakeAnthropic;
let collector: TestCollector;
let gw: GatewayProcess;
let key: string;

const CLIENT = 3;
const SERVER = 2;
const capture = { tracing: { captureContent: true } };
/** The provider credential of the Anthropic target: the upstream sees it, no span may. */
const PROVIDER_KEY = 'sk-ant-api03-providercanary0123456789';
const SECRETS = ['sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe', 'AKIAIOSFODNN7EXAMPLE', 'ghp_0123456789abcdefghijABCDEFGHIJ012345'];

beforeAll(async () => {
  [openai, anthropic, collector] = await Promise.all([startFakeUpstream('oa'), startFakeAnthropic('an'), startCollector()]);
  const b = basics();
  key = b.keys.builder;
  const config = writeManifests([
    ...b.docs,
    route('plain', [{ name: 'oa-plain', provider: 'openai', baseUrl: openai.baseUrl, upstreamModel: 'gpt-up' }]),
    // The ModelRoute of docs/operations.md, its target pointed at the fake upstream.
    captured(),
    secret('anthropic-cred', { apiKey: PROVIDER_KEY }),
    route(
      'claude',
      [
        {
          name: 'an-cap',
          provider: 'anthropic',
          baseUrl: anthropic.baseUrl,
          upstreamModel: 'claude-up',
          credentials: { secretKeyRef: { name: 'anthropic-cred', key: 'apiKey' } },
        },
      ],
      capture,
    ),
    route('resp', [{ name: 'oa-resp', provider: 'openai', baseUrl: openai.baseUrl, upstreamModel: 'gpt-up', responsesApi: true }], capture),
  ]);
  gw = await startGatewayProcess({ SVC_CONFIG: config, OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint, LOG_LEVEL: 'warn' });
}, 120_000);

afterAll(async () => {
  await gw?.stop();
  await Promise.allSettled([collector?.stop(), openai?.close(), anthropic?.close()]);
});

/** One call; the attempt span of its trace once the collector has it (the caller's traceparent names the trace). */
let n = 0;

/** docs/operations.md's example ModelRoute with spec.tracing.captureContent (model id support-bot). */
function captured(): object {
  const doc = parse(docExample('docs/operations.md', 'modelroute-capture')) as { spec: { tracing: unknown; targets: Array<Record<string, unknown>> } };
  expect(doc.spec.tracing).toEqual({ captureContent: true });
  for (const t of doc.spec.targets) t.baseUrl = openai.baseUrl;
  return doc;
}
async function call(path: string, body: object, anthropicDialect = false): Promise<{ attempt: ExportedSpan; server: ExportedSpan; text: string }> {
  const trace = (++n).toString(16).padStart(32, 'a');
  const auth: Record<string, string> = anthropicDialect ? { 'x-api-key': key, 'anthropic-version': '2023-06-01' } : { authorization: `Bearer ${key}` };
  const res = await fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json', traceparent: `00-${trace}-00f067aa0ba902b7-01` },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  const of = (kind: number): ExportedSpan | undefined => collector.spans.find((s) => s.traceId === trace && s.kind === kind);
  await until(() => of(CLIENT) !== undefined && of(SERVER) !== undefined, 15_000, `the spans of trace ${trace}`);
  return { attempt: of(CLIENT) as ExportedSpan, server: of(SERVER) as ExportedSpan, text };
}

const say = (extra = ''): string => `Summarize this. My gateway key is ${key}, ${SECRETS.join(' and ')}. ${extra}`;

describe('the answer on each attempt span', () => {
  it('OpenAI chat, whole: the id and finish reason of the answer, its usage; no content on a route without capture', async () => {
    const { attempt } = await call('/v1/chat/completions', { model: 'plain', messages: [{ role: 'user', content: say() }] });
    expect(attempt.attributes).toMatchObject({
      'gen_ai.response.id': 'chatcmpl-fake',
      'gen_ai.response.finish_reasons': ['stop'],
      'gen_ai.usage.input_tokens': 11,
      'gen_ai.usage.output_tokens': 7,
      'gen_ai.provider.name': 'openai',
    });
    expect(attempt.attributes['gen_ai.input.messages']).toBeUndefined();
    expect(attempt.attributes['gen_ai.output.messages']).toBeUndefined();
  });

  it('OpenAI chat, streamed, captured: the span ends with the stream (usage and finish reason), prompt and completion redacted', async () => {
    openai.enqueue({ kind: 'reply', content: 'Done. Your key sk-proj-Abcdefghijklmnop0123 is safe.', chunkDelayMs: 5 });
    const { attempt, server } = await call('/v1/chat/completions', {
      model: 'support-bot',
      stream: true,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: say() },
      ],
    });
    expect(attempt.attributes).toMatchObject({
      'gen_ai.response.id': 'chatcmpl-fake',
      'gen_ai.response.finish_reasons': ['stop'],
      'gen_ai.usage.output_tokens': 7,
    });
    expect(attempt.parentSpanId).toBe(server.spanId);
    const input = JSON.parse(String(attempt.attributes['gen_ai.input.messages'])) as Array<{ role: string; parts: Array<{ type: string; content: string }> }>;
    expect(input.map((m) => m.role)).toEqual(['system', 'user']);
    expect(input[1]?.parts[0]?.content).toBe('Summarize this. My gateway key is [REDACTED], [REDACTED] and [REDACTED] and [REDACTED]. ');
    const output = JSON.parse(String(attempt.attributes['gen_ai.output.messages'])) as unknown;
    expect(output).toEqual([{ role: 'assistant', parts: [{ type: 'text', content: 'Done. Your key [REDACTED] is safe.' }], finish_reason: 'stop' }]);
  });

  it('Anthropic messages, streamed, passed through: msg id, end_turn, the system prompt as gen_ai.system_instructions', async () => {
    const { attempt } = await call(
      '/anthropic/v1/messages',
      { model: 'claude', max_tokens: 100, stream: true, system: 'You are terse.', messages: [{ role: 'user', content: say() }] },
      true,
    );
    expect(attempt.attributes).toMatchObject({
      'gen_ai.response.id': 'msg_fake',
      'gen_ai.response.finish_reasons': ['end_turn'],
      'gen_ai.provider.name': 'anthropic',
    });
    expect(JSON.parse(String(attempt.attributes['gen_ai.system_instructions']))).toEqual([{ type: 'text', content: 'You are terse.' }]);
    const output = JSON.parse(String(attempt.attributes['gen_ai.output.messages'])) as Array<{ parts: Array<{ content: string }>; finish_reason: string }>;
    expect(output[0]).toMatchObject({ parts: [{ content: ANTHROPIC_FAKE_REPLY }], finish_reason: 'end_turn' });
  });

  it('Anthropic messages, whole, translated to an OpenAI upstream: the upstream id and finish reason', async () => {
    const { attempt } = await call('/anthropic/v1/messages', { model: 'support-bot', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] }, true);
    expect(attempt.attributes).toMatchObject({ 'gen_ai.response.id': 'chatcmpl-fake', 'gen_ai.response.finish_reasons': ['stop'] });
    expect(JSON.parse(String(attempt.attributes['gen_ai.output.messages']))).toEqual([
      { role: 'assistant', parts: [{ type: 'text', content: 'Hello from the fake upstream.' }], finish_reason: 'end_turn' },
    ]);
  });

  it('OpenAI chat, whole, translated to an Anthropic upstream, and streamed', async () => {
    const whole = await call('/v1/chat/completions', { model: 'claude', messages: [{ role: 'user', content: 'hi' }] });
    expect(whole.attempt.attributes).toMatchObject({ 'gen_ai.response.id': 'msg_fake', 'gen_ai.response.finish_reasons': ['end_turn'] });
    const streamed = await call('/v1/chat/completions', { model: 'claude', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    expect(streamed.attempt.attributes).toMatchObject({ 'gen_ai.response.id': 'msg_fake', 'gen_ai.response.finish_reasons': ['end_turn'] });
  });

  it('the Responses API, passed through, whole and streamed: resp id, its status, instructions and output captured', async () => {
    for (const stream of [false, true]) {
      const { attempt } = await call('/v1/responses', { model: 'resp', stream, instructions: 'Answer in French.', input: say() });
      expect(attempt.attributes).toMatchObject({ 'gen_ai.response.id': 'resp_fake', 'gen_ai.response.finish_reasons': ['completed'] });
      expect(JSON.parse(String(attempt.attributes['gen_ai.system_instructions']))).toEqual([{ type: 'text', content: 'Answer in French.' }]);
      const output = JSON.parse(String(attempt.attributes['gen_ai.output.messages'])) as Array<{ parts: Array<{ content: string }> }>;
      expect(output[0]?.parts[0]?.content).toBe('Hello from the fake Responses upstream.');
    }
  });

  it('the Responses API translated to Chat Completions (a target without responsesApi): the chat answer id', async () => {
    const { attempt } = await call('/v1/responses', { model: 'support-bot', stream: true, input: 'hi' });
    expect(attempt.attributes).toMatchObject({ 'gen_ai.response.id': 'chatcmpl-fake', 'gen_ai.response.finish_reasons': ['stop'] });
  });

  it('puts no key and no secret of any prompt or completion in any exported span', () => {
    const everything = JSON.stringify(collector.spans);
    for (const s of [key, key.slice(-12), PROVIDER_KEY, ...SECRETS, 'sk-proj-Abcdefghijklmnop0123']) expect(everything).not.toContain(s);
    expect(anthropic.calls.some((c) => c.headers['x-api-key'] === PROVIDER_KEY)).toBe(true);
    expect(everything).toContain('[REDACTED]');
  });

  it("gives an OpenMetrics scrape the latency histograms' trace_id exemplars; the Prometheus text format stays promtool-clean", async () => {
    const om = await fetch(`${gw.metricsUrl}/metrics`, { headers: { accept: 'application/openmetrics-text; version=1.0.0' } });
    expect(om.headers.get('content-type')).toMatch(/^application\/openmetrics-text/);
    const text = await om.text();
    expect(text.trimEnd().endsWith('# EOF')).toBe(true);
    const traced = new Set(collector.spans.map((s) => s.traceId));
    for (const family of [
      'svc_gateway_request_duration_seconds_bucket',
      'gen_ai_server_request_duration_seconds_bucket',
      'gen_ai_client_operation_duration_seconds_bucket',
    ]) {
      const ids = [...text.matchAll(new RegExp(`^${family}\\{[^}]*\\} \\S+ # \\{trace_id="([0-9a-f]{32})"\\}`, 'gm'))].map((m) => m[1]);
      expect(ids.length, family).toBeGreaterThan(0);
      for (const id of ids) expect(traced.has(id as string)).toBe(true);
    }
    // Counters keep their names in the Prometheus text format after an OpenMetrics scrape.
    const plain = await (await fetch(`${gw.metricsUrl}/metrics`)).text();
    expect(plain).not.toContain('# {trace_id');
    expect(plain).toMatch(/^svc_gateway_requests_total\{/m);
    expect(plain).toMatch(/^gen_ai_client_token_usage_bucket\{[^}]*gen_ai_provider_name="anthropic"/m);
    const lint = await checkMetrics(plain);
    expect(lint.output.trim()).toBe('');
    expect(lint.code).toBe(0);
  });

  it('gives a real Prometheus (exemplar storage on) the exemplars behind every exemplar query of the traffic dashboard', async () => {
    interface Target {
      expr?: string;
      exemplar?: boolean;
    }
    interface Panel {
      title: string;
      targets?: Target[];
      fieldConfig?: { defaults?: { links?: Array<{ internal?: { datasourceUid?: string; query?: { query?: string } } }> } };
    }
    const d = JSON.parse(readFileSync(join(CHART, 'dashboards', 'traffic.json'), 'utf8')) as {
      panels: Panel[];
      templating: { list: Array<{ name: string; type: string }> };
    };
    expect(d.templating.list).toContainEqual(expect.objectContaining({ name: 'traces', type: 'datasource' }));
    // Each panel showing exemplars links them to the trace, in the data source the `traces` variable names.
    for (const p of d.panels.filter((x) => (x.targets ?? []).some((t) => t.exemplar === true))) {
      expect(p.fieldConfig?.defaults?.links?.[0]?.internal, p.title).toMatchObject({
        datasourceUid: '${traces}',
        query: { query: '${__data.fields.trace_id}' },
      });
    }
    const queries = d.panels.flatMap((p) => (p.targets ?? []).filter((t) => t.exemplar === true).map((t) => ({ title: p.title, expr: t.expr ?? '' })));
    expect(queries.length).toBeGreaterThanOrEqual(6);
    const prom = await startPrometheus([new URL(gw.metricsUrl).host], { namespace: 'svc' }, undefined, ['--enable-feature=exemplar-storage']);
    try {
      await until(async () => (await prom.scrapes()) >= 2, 20_000, 'two scrapes');
      const traced = new Set(collector.spans.map((s) => s.traceId));
      const now = Date.now() / 1000;
      for (const q of queries) {
        const expr = q.expr.replaceAll('$namespace', '.*').replaceAll('$__rate_interval', '1m');
        const res = await fetch(`${prom.url}/api/v1/query_exemplars?${new URLSearchParams({ query: expr, start: String(now - 600), end: String(now + 60) })}`);
        const body = (await res.json()) as { status: string; data: Array<{ exemplars: Array<{ labels: { trace_id?: string } }> }> };
        expect(body.status, q.title).toBe('success');
        const ids = body.data.flatMap((s) => s.exemplars.map((e) => e.labels.trace_id));
        expect(ids.length, q.title).toBeGreaterThan(0);
        for (const id of ids) expect(traced.has(id ?? ''), q.title).toBe(true);
      }
    } finally {
      await prom.stop();
    }
  });
});
