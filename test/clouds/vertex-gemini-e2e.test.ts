// Gemini models through the gateway, end to end: Vertex AI (provider vertex, ambient credentials from the fake GKE
// metadata server) and the Gemini API (provider gemini, an API key from a Secret), called with the official OpenAI and
// Anthropic clients, plain and streamed, with tools; usage and cost exactly what the fake reported (cached tokens are
// part of promptTokenCount; thoughts are billed as output), a streamed call costing what the unstreamed one did;
// RESOURCE_EXHAUSTED and UNAVAILABLE fall back to the next target, INVALID_ARGUMENT is the client's 400; a client
// that leaves closes the upstream stream. This needs the gemini translators (gateway/translate, protocol gemini),
// built beside the transports (gateway/providers/google).
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic-upstream.ts';
import { startFakeMetadata, type FakeMetadata } from '../fakes/google/metadata.ts';
import { startFakeGoogle, type FakeGoogle, type GeminiUsage } from '../fakes/google/vertex.ts';
import { basics, route, secret, type TargetSpec } from '../helpers/manifests.ts';
import type { GatewayProcess } from '../helpers/process.ts';
import { until } from '../helpers/until.ts';
import { monthSpend, spentSince, startGoogleGateway } from './google-harness.ts';

const IN_NANO = 1040;
const OUT_NANO = 2080;
const API_KEY = 'AIza-e2e-gemini-api-key-0123456789';
const PROMPT = `Summarize: ${'the quick brown fox jumps over the lazy dog '.repeat(30)}`;
const usage: GeminiUsage = { prompt: 120, candidates: 9, cached: 80, thoughts: 6 };
const cost = (u: GeminiUsage): number => u.prompt * IN_NANO + (u.candidates + (u.thoughts ?? 0)) * OUT_NANO;

let metadata: FakeMetadata;
let google: FakeGoogle;
let stormVertex: FakeGoogle;
let spare: FakeAnthropic;
let gw: GatewayProcess;
const b = basics();
let openai: OpenAI;
let anthropic: Anthropic;

const vertexGemini = (name: string, extra: Partial<TargetSpec> = {}): TargetSpec => ({
  name,
  provider: 'vertex',
  region: 'us-central1',
  project: 'proj-1',
  baseUrl: google.url,
  upstreamModel: 'gemini-2.5-flash',
  credentials: { ambient: {} },
  ...extra,
});

beforeAll(async () => {
  metadata = await startFakeMetadata();
  spare = await startFakeAnthropic('spare');
  google = await startFakeGoogle({ bearer: (t) => metadata.valid(t), apiKeys: new Set([API_KEY]) });
  stormVertex = await startFakeGoogle({ bearer: (t) => metadata.valid(t), apiKeys: new Set() }, 'storm');
  gw = await startGoogleGateway(
    [
      ...b.docs,
      secret('gemini-key', { key: API_KEY }),
      route('gemini-vertex', [vertexGemini('vertex-usc1'), { name: 'spare', provider: 'anthropic', baseUrl: spare.baseUrl, weight: 0 }]),
      route('gemini-studio', [
        {
          name: 'studio',
          provider: 'gemini',
          baseUrl: google.url,
          upstreamModel: 'gemini-2.5-flash',
          credentials: { secretKeyRef: { name: 'gemini-key', key: 'key' } },
        },
      ]),
      route('gemini-storm', [vertexGemini('vertex-storm', { baseUrl: stormVertex.url })]),
    ],
    { GCE_METADATA_HOST: metadata.host },
  );
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: b.keys.builder, maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: `${gw.url}/anthropic`, apiKey: b.keys.builder, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.stop();
  await Promise.all([google?.close(), stormVertex?.close(), spare?.close(), metadata?.close()]);
});

describe('Gemini on Vertex through the OpenAI endpoint', () => {
  it('answers, with usage and cost exact (cached inside the prompt count, thoughts billed as output)', async () => {
    const before = await monthSpend(gw, b.keys.builder);
    google.enqueueGemini({ kind: 'reply', text: 'Hello from Gemini on Vertex.', usage });
    const r = await openai.chat.completions.create({ model: 'gemini-vertex', messages: [{ role: 'user', content: PROMPT }] });
    expect(r.choices[0]?.message.content).toBe('Hello from Gemini on Vertex.');
    expect(r.choices[0]?.finish_reason).toBe('stop');
    expect(r.usage).toMatchObject({ prompt_tokens: 120, completion_tokens: 15 });
    expect(r.usage?.prompt_tokens_details?.cached_tokens).toBe(80);
    const call = google.calls.at(-1);
    expect(call?.path).toBe('/v1/projects/proj-1/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent');
    expect(call?.body).not.toHaveProperty('model');
    expect(await spentSince(gw, b.keys.builder, before)).toBe(cost(usage));
  });

  it('streams, and the streamed call costs what the unstreamed one did', async () => {
    const before = await monthSpend(gw, b.keys.builder);
    google.enqueueGemini({ kind: 'reply', text: 'Hello from Gemini on Vertex.', usage });
    const stream = await openai.chat.completions.create({
      model: 'gemini-vertex',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: PROMPT }],
    });
    let text = '';
    let u: OpenAI.CompletionUsage | undefined;
    for await (const c of stream) {
      text += c.choices[0]?.delta.content ?? '';
      if (c.usage) u = c.usage;
    }
    expect(text).toBe('Hello from Gemini on Vertex.');
    expect(u).toMatchObject({ prompt_tokens: 120, completion_tokens: 15 });
    expect(google.calls.at(-1)?.path).toMatch(/:streamGenerateContent\?alt=sse$/);
    expect(await spentSince(gw, b.keys.builder, before)).toBe(cost(usage));
  });

  it('translates tools both ways', async () => {
    google.enqueueGemini({ kind: 'reply', calls: [{ name: 'get_weather', args: { city: 'Paris' } }] });
    const r = await openai.chat.completions.create({
      model: 'gemini-vertex',
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
    });
    const tc = r.choices[0]?.message.tool_calls?.[0];
    expect(tc?.type === 'function' ? tc.function.name : null).toBe('get_weather');
    expect(JSON.parse(tc?.type === 'function' ? tc.function.arguments : '{}')).toEqual({ city: 'Paris' });
    expect(r.choices[0]?.finish_reason).toBe('tool_calls');
    const tools = google.calls.at(-1)?.body.tools as Array<{ functionDeclarations?: Array<{ name: string }> }>;
    expect(tools[0]?.functionDeclarations?.[0]?.name).toBe('get_weather');
  });
});

describe('Gemini through the Anthropic endpoint', () => {
  it('answers Messages, plain and streamed, from the Gemini API with the API key', async () => {
    const msg = await anthropic.messages.create({ model: 'gemini-studio', max_tokens: 50, messages: [{ role: 'user', content: PROMPT }] });
    expect(msg.content[0]).toMatchObject({ type: 'text' });
    expect(google.calls.at(-1)?.path).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    expect(google.calls.at(-1)?.headers['x-goog-api-key']).toBe(API_KEY);
    const final = await anthropic.messages.stream({ model: 'gemini-studio', max_tokens: 50, messages: [{ role: 'user', content: PROMPT }] }).finalMessage();
    expect(final.content[0]).toMatchObject({ type: 'text' });
    expect(final.usage.input_tokens + (final.usage.cache_read_input_tokens ?? 0)).toBe(11);
    expect(gw.output()).not.toContain(API_KEY);
  });
});

describe('failures', () => {
  it('falls back on RESOURCE_EXHAUSTED (upstream_429) and UNAVAILABLE (upstream_5xx)', async () => {
    for (const [status, reason] of [
      [429, 'upstream_429'],
      [503, 'upstream_5xx'],
    ] as const) {
      google.enqueueGemini({ kind: 'status', status });
      const r = await openai.chat.completions.create({ model: 'gemini-vertex', messages: [{ role: 'user', content: PROMPT }] }).withResponse();
      expect(r.response.headers.get('x-svc-upstream')).toBe('spare');
      expect(r.response.headers.get('x-svc-fallback-reason')).toBe(reason);
    }
  });

  it("answers INVALID_ARGUMENT as the client's 400 in its dialect, without falling back", async () => {
    const spareCalls = spare.calls.length;
    google.enqueueGemini({ kind: 'status', status: 400, message: 'Invalid value at generation_config.temperature (TYPE_FLOAT)' });
    const err = await openai.chat.completions.create({ model: 'gemini-vertex', messages: [{ role: 'user', content: PROMPT }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(String((err as Error).message)).toContain('generation_config.temperature');
    expect(spare.calls.length).toBe(spareCalls);
  });

  it('a client that leaves closes the Vertex stream and its connection', async () => {
    const idleBefore = stormVertex.sockets;
    stormVertex.geminiFallback = () => ({ kind: 'reply', text: 'word '.repeat(60), chunkDelayMs: 20 });
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        const ctrl = new AbortController();
        const stream = await openai.chat.completions.create(
          { model: 'gemini-storm', stream: true, messages: [{ role: 'user', content: 'Talk' }] },
          { signal: ctrl.signal },
        );
        let seen = 0;
        try {
          for await (const c of stream) if (c.choices[0]?.delta.content && ++seen === 5) ctrl.abort();
        } catch {
          /* aborted by us */
        }
        expect(seen).toBe(5);
      }),
    );
    await until(() => stormVertex.open === 0 && stormVertex.sockets <= idleBefore, 2000, 'the fake Vertex has no request or connection left');
  });
});
