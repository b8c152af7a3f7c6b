// Audio calls through a real OpenTelemetry Collector, traced as chat calls are: one SERVER span per call in the
// caller's trace ("transcription whisper-1", "translation ...", "speech tts-1"), a CLIENT child per upstream attempt
// (a fallback is a failed sibling first), the GenAI attributes, the billed unit (seconds or characters) and cost; and
// never the audio, the text to speak, the transcript or the API key in any span.
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toneWav8 } from '../../gateway/providers/mock/audio-bytes.ts';
import { OPENAI_KEY, TRANSCRIPT, startAudioUpstream, type AudioUpstream } from '../fakes/audio-upstream.ts';
import { writeManifests } from '../helpers/fleet.ts';
import { basics, route, secret, type TargetSpec } from '../helpers/manifests.ts';
import { startGatewayProcess, type GatewayProcess } from '../helpers/process.ts';
import { freePort } from '../helpers/redis.ts';
import { until } from '../helpers/until.ts';
import { startCollector, type ExportedSpan, type TestCollector } from './collector.ts';

let up: AudioUpstream;
let collector: TestCollector;
let gw: GatewayProcess;
let key: string;
let client: OpenAI;

const SERVER = 2;
const CLIENT = 3;
const PER_SECOND_USD = 0.0001;
const SPOKEN = 'Meet me by the old lighthouse at nine.';
const PROMPT = 'lighthouse keeper vocabulary';

beforeAll(async () => {
  [up, collector] = await Promise.all([startAudioUpstream(), startCollector()]);
  const b = basics();
  key = b.keys.builder;
  const openai = (name: string, upstreamModel: string): TargetSpec => ({
    name,
    provider: 'openai',
    baseUrl: up.baseUrl,
    upstreamModel,
    credentials: { secretKeyRef: { name: 'openai-key', key: 'key' } },
  });
  const dead = `http://127.0.0.1:${await freePort()}/v1`;
  const docs = [
    ...b.docs,
    secret('openai-key', { key: OPENAI_KEY }),
    route('whisper-1', [openai('oa-whisper', 'whisper-1')], { type: 'transcription', pricing: { inputPerMTokUsd: 0, perMinuteUsd: PER_SECOND_USD * 60 } }),
    route('tts-1', [openai('oa-tts', 'tts-1')], { type: 'speech', pricing: { inputPerMTokUsd: 0, perMCharactersUsd: 15 } }),
    route(
      'whisper-fb',
      [
        { name: 'dead', provider: 'openai', baseUrl: dead, upstreamModel: 'whisper-1', timeouts: { connectMs: 1000 } },
        { ...openai('backup', 'whisper-1'), weight: 0 },
      ],
      { type: 'transcription', pricing: { inputPerMTokUsd: 0, perMinuteUsd: PER_SECOND_USD * 60 } },
    ),
  ];
  gw = await startGatewayProcess({ SVC_CONFIG: writeManifests(docs), OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint, LOG_LEVEL: 'warn' });
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
}, 120_000);

afterAll(async () => {
  await gw?.stop();
  await Promise.allSettled([collector?.stop(), up?.close()]);
});

const clip = async (): Promise<File> => (await toFile(toneWav8(2.5), 'clip.wav')) as File;
const traceparent = (trace: string): { headers: Record<string, string> } => ({ headers: { traceparent: `00-${trace}-00f067aa0ba902b7-01` } });
const inTrace = (trace: string): ExportedSpan[] => collector.spans.filter((s) => s.traceId === trace);

async function spansOf(trace: string, n: number): Promise<{ server: ExportedSpan; attempts: ExportedSpan[] }> {
  await until(async () => inTrace(trace).length >= n, 15_000, `${n} spans of trace ${trace} at the collector`);
  const spans = inTrace(trace);
  const server = spans.filter((s) => s.kind === SERVER);
  expect(server).toHaveLength(1);
  return { server: server[0] as ExportedSpan, attempts: spans.filter((s) => s.kind === CLIENT) };
}

describe('audio calls through a gateway with OTEL_EXPORTER_OTLP_ENDPOINT set', () => {
  it('a transcription: a server span and an attempt span, billed seconds and cost, no transcript or prompt on them', async () => {
    const trace = '5cf92f3577b34da6a3ce929d0e0e4701';
    const data = await client.audio.transcriptions.create({ file: await clip(), model: 'whisper-1', prompt: PROMPT }, traceparent(trace));
    expect(data.text).toBe(TRANSCRIPT);
    const { server, attempts } = await spansOf(trace, 2);
    expect(server.name).toBe('transcription whisper-1');
    expect(server.parentSpanId).toBe('00f067aa0ba902b7');
    expect(server.attributes).toMatchObject({
      'gen_ai.operation.name': 'transcription',
      'gen_ai.request.model': 'whisper-1',
      'gen_ai.response.model': 'whisper-1',
      'http.response.status_code': 200,
      'svc.account': 'acme',
      'svc.api_key.name': 'builder-key',
      'svc.usage.unit': 'seconds',
      'svc.usage.units': 3,
      'svc.cost_nano_usd': 3 * PER_SECOND_USD * 1e9,
    });
    expect(attempts).toHaveLength(1);
    expect(attempts[0]?.parentSpanId).toBe(server.spanId);
    expect(attempts[0]?.name).toBe('transcription whisper-1');
    expect(attempts[0]?.attributes).toMatchObject({
      'gen_ai.operation.name': 'transcription',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'whisper-1',
      'server.address': '127.0.0.1',
      'svc.target': 'oa-whisper',
    });
    expect(attempts[0]?.attributes['error.type']).toBeUndefined();
  });

  it('a translation and a speech call are named by their operation; speech bills characters, its text is not on a span', async () => {
    const t1 = '5cf92f3577b34da6a3ce929d0e0e4702';
    await client.audio.translations.create({ file: await clip(), model: 'whisper-1' }, traceparent(t1));
    expect((await spansOf(t1, 2)).server.name).toBe('translation whisper-1');
    const t2 = '5cf92f3577b34da6a3ce929d0e0e4703';
    const speech = await client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: SPOKEN }, traceparent(t2));
    expect((await speech.arrayBuffer()).byteLength).toBe(up.speechBytes.length);
    const { server, attempts } = await spansOf(t2, 2);
    expect(server.name).toBe('speech tts-1');
    expect(server.attributes).toMatchObject({ 'gen_ai.operation.name': 'speech', 'svc.usage.unit': 'characters', 'svc.usage.units': SPOKEN.length });
    expect(attempts.map((a) => a.attributes['svc.target'])).toEqual(['oa-tts']);
  });

  it('a fallback is a failed attempt span before the one that answered', async () => {
    const trace = '5cf92f3577b34da6a3ce929d0e0e4704';
    await client.audio.transcriptions.create({ file: await clip(), model: 'whisper-fb' }, traceparent(trace));
    const { server, attempts } = await spansOf(trace, 3);
    expect(server.attributes['svc.fallback.reason']).toBe('connect_error');
    expect(attempts.map((a) => [a.attributes['svc.target'], a.attributes['error.type'] ?? null])).toEqual([
      ['dead', 'connect_error'],
      ['backup', null],
    ]);
    expect(attempts[0]?.status.code).toBe(2); // ERROR
  });

  it('no span carries the transcript, the prompt, the text spoken or the key', () => {
    const all = JSON.stringify(collector.spans);
    expect(collector.spans.length).toBeGreaterThanOrEqual(9);
    for (const secretText of [TRANSCRIPT, PROMPT, SPOKEN, key, OPENAI_KEY]) expect(all).not.toContain(secretText);
  });
});
