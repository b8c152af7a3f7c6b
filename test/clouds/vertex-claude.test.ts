// Claude on Vertex AI through the gateway (provider vertex, a claude-* upstreamModel: protocol anthropic over
// rawPredict and streamRawPredict), the gateway in a child process whose Application Default Credentials are the
// fake GKE metadata server's. The official Anthropic and OpenAI clients call it, plain and streamed, with tools; usage
// is exactly what the fake reported and the cost of a streamed call is the cost of the same call unstreamed; a
// throttled Vertex falls back to another target; one token serves every call; a credential that cannot be had fails
// over with the reason credential_error and nothing of it in answers or logs; count_tokens goes to Vertex's
// count-tokens model.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic-upstream.ts';
import { startFakeMetadata, type FakeMetadata } from '../fakes/google/metadata.ts';
import { googleError, startFakeGoogle, type FakeGoogle } from '../fakes/google/vertex.ts';
import { basics, route, secret, type TargetSpec } from '../helpers/manifests.ts';
import type { GatewayProcess } from '../helpers/process.ts';
import { until } from '../helpers/until.ts';
import { monthSpend, spentSince, startGoogleGateway } from './google-harness.ts';

const MODEL = 'claude-sonnet-4@20250514';
/** Long enough that the usage the fake reports (cache reads included) is within what the request could use. */
const PROMPT = `Summarize: ${'the quick brown fox jumps over the lazy dog '.repeat(30)}`;
const IN_NANO = 1040;
const OUT_NANO = 2080;
/** A string planted in a broken service-account JSON: it must never come out of the gateway. */
const CANARY = 'CANARY-sa-key-9f8e7d6c5b4a';

let metadata: FakeMetadata;
let google: FakeGoogle;
/** The Vertex of the disconnect storm alone, so its connection count starts at 0. */
let stormVertex: FakeGoogle;
let spare: FakeAnthropic;
let gw: GatewayProcess;
let keys: { builder: string; free: string };
let anthropic: Anthropic;
let openai: OpenAI;

const vertexTarget = (name: string, extra: Partial<TargetSpec> = {}): TargetSpec => ({
  name,
  provider: 'vertex',
  region: 'us-east5',
  project: 'proj-1',
  baseUrl: google.url,
  upstreamModel: MODEL,
  credentials: { ambient: {} },
  ...extra,
});

beforeAll(async () => {
  metadata = await startFakeMetadata();
  spare = await startFakeAnthropic('spare-anthropic');
  google = await startFakeGoogle({ bearer: (t) => metadata.valid(t), apiKeys: new Set() });
  stormVertex = await startFakeGoogle({ bearer: (t) => metadata.valid(t), apiKeys: new Set() }, 'storm-vertex');
  const b = basics();
  keys = b.keys;
  const brokenKey = JSON.stringify({
    type: 'service_account',
    project_id: 'proj-1',
    private_key: `-----BEGIN PRIVATE KEY-----\n${CANARY}\n-----END PRIVATE KEY-----\n`,
  });
  gw = await startGoogleGateway(
    [
      ...b.docs,
      secret('broken-sa', { 'service-account.json': brokenKey }),
      route('claude-vertex', [vertexTarget('vertex-use5'), { name: 'spare', provider: 'anthropic', baseUrl: spare.baseUrl, weight: 0 }]),
      route('claude-vertex-broken', [
        vertexTarget('vertex-broken', { credentials: { secretKeyRef: { name: 'broken-sa' } } }),
        { name: 'spare', provider: 'anthropic', baseUrl: spare.baseUrl, weight: 0 },
      ]),
      route('claude-vertex-storm', [vertexTarget('vertex-storm', { baseUrl: stormVertex.url })]),
      route('claude-vertex-only-broken', [vertexTarget('vertex-broken', { credentials: { secretKeyRef: { name: 'broken-sa' } } })]),
    ],
    { GCE_METADATA_HOST: metadata.host },
  );
  anthropic = new Anthropic({ baseURL: `${gw.url}/anthropic`, apiKey: keys.builder, maxRetries: 0 });
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: keys.builder, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.stop();
  await Promise.all([google?.close(), stormVertex?.close(), spare?.close(), metadata?.close()]);
});

const usage = { input_tokens: 30, output_tokens: 12, cache_read_input_tokens: 100, cache_creation_input_tokens: 20 };
const cost = (u: typeof usage): number => (u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens) * IN_NANO + u.output_tokens * OUT_NANO;

describe('Claude on Vertex through the Anthropic endpoint', () => {
  it('answers with the Anthropic SDK: the rawPredict URL, anthropic_version in the body, no model, the beta header, usage and cost exact', async () => {
    const before = await monthSpend(gw, keys.builder);
    google.enqueueClaude({ kind: 'reply', text: 'Hello from Claude on Vertex.', usage });
    const { data, response } = await anthropic.messages
      .create(
        { model: 'claude-vertex', max_tokens: 100, messages: [{ role: 'user', content: PROMPT }] },
        { headers: { 'anthropic-beta': 'prompt-caching-2024-07-31' } },
      )
      .withResponse();
    expect(data.content).toEqual([{ type: 'text', text: 'Hello from Claude on Vertex.' }]);
    expect(data.model).toBe('claude-vertex');
    expect(data.usage).toMatchObject(usage);
    expect(response.headers.get('x-svc-upstream')).toBe('vertex-use5');
    // This call, not an availability probe that may have come after it (max_tokens 1).
    const call = google.calls.filter((c) => c.body.max_tokens === 100).at(-1);
    expect(call?.path).toBe(`/v1/projects/proj-1/locations/us-east5/publishers/anthropic/models/${MODEL}:rawPredict`);
    expect(call?.body.anthropic_version).toBe('vertex-2023-10-16');
    expect(call?.body).not.toHaveProperty('model');
    expect(call?.headers['anthropic-beta']).toBe('prompt-caching-2024-07-31');
    expect(String(call?.headers.authorization)).toMatch(/^Bearer ya29\.fake-gke-/);
    expect(await spentSince(gw, keys.builder, before)).toBe(cost(usage));
  });

  it('streams with streamRawPredict, and the streamed call costs what the unstreamed one did', async () => {
    const before = await monthSpend(gw, keys.builder);
    google.enqueueClaude({ kind: 'reply', text: 'Hello from Claude on Vertex.', usage });
    const stream = anthropic.messages.stream({ model: 'claude-vertex', max_tokens: 100, messages: [{ role: 'user', content: PROMPT }] });
    const final = await stream.finalMessage();
    expect(final.content).toEqual([{ type: 'text', text: 'Hello from Claude on Vertex.' }]);
    expect(final.usage).toMatchObject({ output_tokens: 12, input_tokens: 30, cache_read_input_tokens: 100, cache_creation_input_tokens: 20 });
    expect(google.calls.at(-1)?.path).toBe(`/v1/projects/proj-1/locations/us-east5/publishers/anthropic/models/${MODEL}:streamRawPredict`);
    expect(google.calls.at(-1)?.body.stream).toBe(true);
    expect(await spentSince(gw, keys.builder, before)).toBe(cost(usage));
  });

  it('passes tool use through', async () => {
    google.enqueueClaude({ kind: 'reply', tools: [{ id: 'toolu_v1', name: 'get_weather', input: { city: 'Paris' } }] });
    const msg = await anthropic.messages.create({
      model: 'claude-vertex',
      max_tokens: 100,
      tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
    });
    expect(msg.stop_reason).toBe('tool_use');
    expect(msg.content).toEqual([{ type: 'tool_use', id: 'toolu_v1', name: 'get_weather', input: { city: 'Paris' } }]);
    expect(google.calls.at(-1)?.body.tools).toEqual([{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }]);
  });

  it("counts tokens with Vertex's count-tokens model (model and anthropic_version in the body)", async () => {
    const r = await anthropic.messages.countTokens({ model: 'claude-vertex', messages: [{ role: 'user', content: 'How many tokens is this?' }] });
    expect(r.input_tokens).toBeGreaterThan(0);
    const call = google.calls.at(-1);
    expect(call?.path).toBe('/v1/projects/proj-1/locations/us-east5/publishers/anthropic/models/count-tokens:rawPredict');
    expect(call?.body).toMatchObject({ model: MODEL, anthropic_version: 'vertex-2023-10-16' });
  });
});

describe('Claude on Vertex through the OpenAI endpoint', () => {
  it('answers chat completions, plain and streamed, with tools, usage and cost exact', async () => {
    const before = await monthSpend(gw, keys.builder);
    google.enqueueClaude({ kind: 'reply', text: 'Plain answer.', usage });
    const plain = await openai.chat.completions.create({ model: 'claude-vertex', messages: [{ role: 'user', content: PROMPT }] });
    expect(plain.choices[0]?.message.content).toBe('Plain answer.');
    expect(plain.usage?.prompt_tokens).toBe(150);
    expect(plain.usage?.completion_tokens).toBe(12);
    expect(plain.usage?.prompt_tokens_details?.cached_tokens).toBe(100);
    const afterPlain = await spentSince(gw, keys.builder, before);
    expect(afterPlain).toBe(cost(usage));

    const mid = await monthSpend(gw, keys.builder);
    google.enqueueClaude({ kind: 'reply', tools: [{ id: 'toolu_s1', name: 'get_weather', input: { city: 'Oslo' } }], usage });
    const stream = await openai.chat.completions.create({
      model: 'claude-vertex',
      stream: true,
      stream_options: { include_usage: true },
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
      messages: [{ role: 'user', content: 'Weather in Oslo?' }],
    });
    let args = '';
    let name = '';
    let finish: string | null = null;
    let streamedUsage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      const tc = chunk.choices[0]?.delta.tool_calls?.[0];
      if (tc?.function?.name) name = tc.function.name;
      if (tc?.function?.arguments) args += tc.function.arguments;
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) streamedUsage = chunk.usage;
    }
    expect(name).toBe('get_weather');
    expect(JSON.parse(args)).toEqual({ city: 'Oslo' });
    expect(finish).toBe('tool_calls');
    expect(streamedUsage?.prompt_tokens).toBe(150);
    expect(await spentSince(gw, keys.builder, mid)).toBe(cost(usage));
  });
});

describe('failures', () => {
  it('falls back to the next target when Vertex throttles (429 RESOURCE_EXHAUSTED)', async () => {
    google.enqueueClaude({
      kind: 'status',
      status: 429,
      body: JSON.parse(googleError(429, 'Quota exceeded for aiplatform.googleapis.com/online_prediction_requests_per_base_model')) as object,
    });
    const { data, response } = await anthropic.messages
      .create({ model: 'claude-vertex', max_tokens: 50, messages: [{ role: 'user', content: PROMPT }] })
      .withResponse();
    expect(data.content[0]).toMatchObject({ type: 'text' });
    expect(response.headers.get('x-svc-upstream')).toBe('spare');
    expect(response.headers.get('x-svc-fallback')).toBe('true');
    expect(response.headers.get('x-svc-fallback-reason')).toBe('upstream_429');
  });

  it('a service-account credential that cannot be used fails over with credential_error, and nothing of it comes out', async () => {
    const calls = google.calls.length;
    const res = await fetch(`${gw.url}/anthropic/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': keys.builder, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'claude-vertex-broken', max_tokens: 50, messages: [{ role: 'user', content: PROMPT }] }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-svc-upstream')).toBe('spare');
    expect(res.headers.get('x-svc-fallback-reason')).toBe('credential_error');
    expect(await res.text()).not.toContain(CANARY);
    expect(google.calls.length).toBe(calls); // Vertex was never called without a token

    const alone = await fetch(`${gw.url}/anthropic/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': keys.builder, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'claude-vertex-only-broken', max_tokens: 50, messages: [{ role: 'user', content: PROMPT }] }),
    });
    const text = await alone.text();
    expect(alone.status).toBe(502);
    expect(JSON.parse(text)).toMatchObject({ type: 'error', error: { message: expect.stringContaining('could not obtain a Google access token') as string } });
    expect(text).not.toContain(CANARY);
    expect(text).not.toContain('PRIVATE KEY');
    expect(gw.output()).not.toContain(CANARY);
  });

  it('fetched one token from the metadata server for all these calls, with the cloud-platform scope, and no token in the logs', async () => {
    await Promise.all(
      Array.from({ length: 5 }, () => anthropic.messages.create({ model: 'claude-vertex', max_tokens: 10, messages: [{ role: 'user', content: PROMPT }] })),
    );
    expect(metadata.tokenFetches).toBe(1);
    expect(metadata.scopes).toEqual(['https://www.googleapis.com/auth/cloud-platform']);
    for (const token of metadata.issued) expect(gw.output()).not.toContain(token);
  });
});

describe('a client that leaves', () => {
  it('closes the Vertex stream and its connection (the fake counts none left)', async () => {
    const N = 4;
    // The probes' connection may idle in the pool (a finished call keeps it): the storm must leave none of its own.
    const idleBefore = stormVertex.sockets;
    stormVertex.claudeFallback = () => ({ kind: 'reply', text: 'word '.repeat(60), chunkDelayMs: 20 });
    await Promise.all(
      Array.from({ length: N }, async () => {
        const ctrl = new AbortController();
        const stream = await anthropic.messages.create(
          { model: 'claude-vertex-storm', max_tokens: 500, stream: true, messages: [{ role: 'user', content: 'Talk' }] },
          { signal: ctrl.signal },
        );
        let seen = 0;
        try {
          for await (const ev of stream) if (ev.type === 'content_block_delta' && ++seen === 5) ctrl.abort();
        } catch {
          /* aborted by us */
        }
        // The abort lands after the fifth delta; one more already read off the socket may still be yielded.
        expect(seen).toBeGreaterThanOrEqual(5);
      }),
    );
    expect(stormVertex.calls.filter((c) => c.body.stream === true)).toHaveLength(N);
    await until(() => stormVertex.open === 0 && stormVertex.sockets <= idleBefore, 2000, 'the fake Vertex has no request or connection left');
  });
});

describe('probes', () => {
  it('probe the Vertex target with its own token (rawPredict, max_tokens 1), and say why the broken one fails', async () => {
    const isProbe = (c: FakeGoogle['calls'][number]): boolean =>
      c.body.max_tokens === 1 && JSON.stringify(c.body.messages) === '[{"role":"user","content":"ping"}]';
    await until(() => google.calls.some(isProbe), 15_000, 'a probe of the Vertex target');
    const probe = google.calls.find(isProbe);
    expect(probe?.path).toBe(`/v1/projects/proj-1/locations/us-east5/publishers/anthropic/models/${MODEL}:rawPredict`);
    expect(probe?.body.anthropic_version).toBe('vertex-2023-10-16');
    expect(metadata.valid(String(probe?.headers.authorization).replace('Bearer ', ''))).toBe(true);
    const summary = await (await fetch(`${gw.url}/status/api/v2/components.json`)).text();
    expect(summary).toContain('claude-vertex');
    expect(summary).not.toContain(CANARY);
  });
});
