// Guardrail checks in traces, through a real OpenTelemetry Collector: a gateway process with tracing on makes a
// child span of the call's span per guardrail check and stage (name, detector, stage, action, match count, whether
// it blocked; its duration the detector's time), for a passed, a masked, a blocked request and a streamed answer;
// and no matched text (email, card, key) appears in any span the collector received.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../fakes/upstream.ts';
import { writeManifests } from '../helpers/fleet.ts';
import { basics, route } from '../helpers/manifests.ts';
import { startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';
import { until } from '../helpers/until.ts';
import { startCollector, type ExportedSpan, type TestCollector } from './collector.ts';

const EMAIL = 'jane.doe@example.com';
const AWS_KEY = 'AKIAZ7Q3XKQ4PLMNB2WE';
const CARD = '4111 1111 1111 1111';
const SERVER = 2;
const INTERNAL = 1;

let up: FakeUpstream;
let collector: TestCollector;
let gw: GatewayProcess;
let openai: OpenAI;

beforeAll(async () => {
  [up, collector] = await Promise.all([startFakeUpstream(), startCollector()]);
  const b = basics();
  const config = writeManifests([
    ...b.docs,
    route('gpt-guarded', [{ name: 'oa', provider: 'openai', baseUrl: up.baseUrl }]),
    {
      apiVersion: 'gateway.svc.dev/v1alpha1',
      kind: 'Guardrail',
      metadata: { name: 'company' },
      spec: {
        checks: [
          { detector: 'secrets', action: 'block' },
          { detector: 'card', action: 'log' },
          { detector: 'email', action: 'mask', restore: true },
        ],
      },
    },
  ]);
  gw = await startGatewayProcess({ SVC_CONFIG: config, OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint, LOG_LEVEL: 'warn' });
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: b.keys.builder, maxRetries: 0 });
}, 120_000);

afterAll(async () => {
  await gw?.stop();
  await Promise.allSettled([collector?.stop(), up?.close()]);
});

const traceOf = (id: string): ExportedSpan[] => collector.spans.filter((s) => s.traceId === id);
const checks = (spans: ExportedSpan[]): ExportedSpan[] => spans.filter((s) => s.kind === INTERNAL && s.name.startsWith('guardrail '));
const byStage = (spans: ExportedSpan[], stage: string): Record<string, ExportedSpan['attributes']> =>
  Object.fromEntries(
    checks(spans)
      .filter((s) => s.attributes['svc.guardrail.stage'] === stage)
      .map((s) => [s.attributes['svc.guardrail.check'], s.attributes]),
  );

/** The spans of one call, sent in a trace of its own: its server span and the check spans (request and response). */
async function spansOf(traceId: string, count: number): Promise<ExportedSpan[]> {
  await until(async () => checks(traceOf(traceId)).length >= count && traceOf(traceId).some((s) => s.kind === SERVER), 15_000, `${count} check spans`);
  return traceOf(traceId);
}
const traceparent = (n: number): { headers: Record<string, string>; id: string } => {
  const id = `4bf92f3577b34da6a3ce929d0e0e47${String(n).padStart(2, '0')}`;
  return { id, headers: { traceparent: `00-${id}-00f067aa0ba902b7-01` } };
};

describe('guardrail checks as spans', () => {
  it('a masked request and its answer: a child span per check and stage, with matches, under the call span', async () => {
    const t = traceparent(1);
    up.enqueue({ kind: 'reply', content: 'I will write to <EMAIL_1> about card ' + CARD + '.' });
    const r = await openai.chat.completions.create(
      { model: 'gpt-guarded', messages: [{ role: 'user', content: `Email ${EMAIL} please` }] },
      { headers: t.headers },
    );
    expect(r.choices[0]?.message.content).toContain(EMAIL);
    const spans = await spansOf(t.id, 6);
    const server = spans.find((s) => s.kind === SERVER)!;
    for (const c of checks(spans)) {
      expect(c.parentSpanId).toBe(server.spanId);
      expect(c.attributes['svc.guardrail.name']).toBe('company');
    }
    expect(byStage(spans, 'request')).toEqual({
      secrets: expect.objectContaining({
        'svc.guardrail.detector': 'secrets',
        'svc.guardrail.action': 'block',
        'svc.guardrail.matches': 0,
        'svc.guardrail.blocked': false,
      }),
      card: expect.objectContaining({ 'svc.guardrail.detector': 'card', 'svc.guardrail.action': 'log', 'svc.guardrail.matches': 0 }),
      email: expect.objectContaining({ 'svc.guardrail.detector': 'email', 'svc.guardrail.action': 'mask', 'svc.guardrail.matches': 1 }),
    });
    expect(byStage(spans, 'response')).toMatchObject({
      card: { 'svc.guardrail.action': 'log', 'svc.guardrail.matches': 1 },
      email: { 'svc.guardrail.matches': 0 },
    });
    expect(checks(spans).find((s) => s.name === 'guardrail company/email')).toBeTruthy();
  });

  it('a blocked request: the blocking check says so, the call span says content_blocked', async () => {
    const t = traceparent(2);
    const err = await openai.chat.completions
      .create({ model: 'gpt-guarded', messages: [{ role: 'user', content: `deploy with ${AWS_KEY}` }] }, { headers: t.headers })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    const spans = await spansOf(t.id, 3);
    expect(byStage(spans, 'request').secrets).toMatchObject({ 'svc.guardrail.matches': 1, 'svc.guardrail.blocked': true });
    expect(byStage(spans, 'response')).toEqual({});
    expect(spans.find((s) => s.kind === SERVER)?.attributes['error.type']).toBe('content_blocked');
  });

  it('a streamed answer blocked mid-way: the response-stage span of the blocking check', async () => {
    const t = traceparent(3);
    up.enqueue({ kind: 'reply', content: 'x', pieces: ['Here: ', AWS_KEY, ' and the rest.'] });
    const stream = await openai.chat.completions.create(
      { model: 'gpt-guarded', stream: true, messages: [{ role: 'user', content: 'which key?' }] },
      { headers: t.headers },
    );
    const err = await (async () => {
      for await (const chunk of stream) void chunk;
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    const spans = await spansOf(t.id, 6);
    expect(byStage(spans, 'response').secrets).toMatchObject({ 'svc.guardrail.matches': 1, 'svc.guardrail.blocked': true, 'svc.guardrail.action': 'block' });
    expect(spans.find((s) => s.kind === SERVER)?.attributes['error.type']).toBe('content_blocked');
  });

  it('no matched text in any span the collector received', () => {
    expect(checks(collector.spans).length).toBeGreaterThanOrEqual(15);
    const everything = JSON.stringify(collector.spans);
    for (const secret of [EMAIL, 'jane.doe', AWS_KEY, CARD, CARD.replaceAll(' ', '')]) expect(everything).not.toContain(secret);
  });
});
