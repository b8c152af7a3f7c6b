// The Google transports on their own (no translator): the providers `gemini` (Gemini API) and `vertex` (Gemini
// models) send the body they are given to the right URL with the right credential, and hand back Google's answers,
// streams and errors as they came (status kept, so 429 and 503 fall back and 400 is the client's). Ambient
// credentials come from the fake GKE metadata server (GCE_METADATA_HOST is set in this test process only: each test
// file runs in its own process).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CompiledTarget } from '../../gateway/contract/snapshot.ts';
import { GoogleTokens } from '../../gateway/providers/google/auth.ts';
import { GeminiApiProvider } from '../../gateway/providers/google/gemini-api.ts';
import { geminiApiUrl, vertexClaudeUrl, vertexGeminiUrl } from '../../gateway/providers/google/urls.ts';
import { VertexProvider, vertexClaudeBody } from '../../gateway/providers/google/vertex.ts';
import { UpstreamFailure, type UpstreamOutcome } from '../../gateway/providers/types.ts';
import { startFakeMetadata, type FakeMetadata } from '../fakes/google/metadata.ts';
import { GEMINI_FAKE_REPLY, startFakeGoogle, type FakeGoogle } from '../fakes/google/vertex.ts';

const API_KEY = 'AIza-transport-test-key';
const BODY = JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'Hello' }] }], generationConfig: { maxOutputTokens: 20 } });
let metadata: FakeMetadata;
let google: FakeGoogle;
let tokens: GoogleTokens;
let gemini: GeminiApiProvider;
let vertex: VertexProvider;

function target(extra: Partial<CompiledTarget>): CompiledTarget {
  return {
    name: 't',
    provider: 'gemini',
    baseUrl: google.url,
    upstreamModel: 'gemini-2.5-flash',
    credential: { kind: 'value', value: API_KEY },
    weight: 1,
    timeouts: { connectMs: 2000, firstByteMs: 5000, idleMs: 5000, totalMs: 10000 },
    mock: null,
    ...extra,
  };
}

const send = (p: GeminiApiProvider | VertexProvider, t: CompiledTarget, stream = false): Promise<UpstreamOutcome> =>
  p.send({ target: t, operation: 'chat', body: BODY, stream, headers: {}, signal: new AbortController().signal });

async function text(o: UpstreamOutcome): Promise<string> {
  if (o.kind !== 'stream') return o.body;
  let out = '';
  for await (const c of o.body) out += typeof c === 'string' ? c : Buffer.from(c).toString('utf8');
  return out;
}

beforeAll(async () => {
  metadata = await startFakeMetadata();
  process.env.GCE_METADATA_HOST = metadata.host;
  google = await startFakeGoogle({ bearer: (t) => metadata.valid(t), apiKeys: new Set([API_KEY]) });
  tokens = new GoogleTokens();
  gemini = new GeminiApiProvider(tokens);
  vertex = new VertexProvider(tokens);
});

afterAll(async () => {
  await Promise.all([gemini?.close(), vertex?.close()]);
  await Promise.all([google?.close(), metadata?.close()]);
});

describe('URLs', () => {
  const t = (extra: Partial<CompiledTarget>): CompiledTarget => ({
    ...target({}),
    baseUrl: null,
    provider: 'vertex',
    region: 'us-east5',
    project: 'my-proj',
    ...extra,
  });
  it("are Vertex's regional and global hosts, the Gemini API's, or the baseUrl's origin", () => {
    expect(vertexGeminiUrl(t({}), 'chat', false)).toBe(
      'https://us-east5-aiplatform.googleapis.com/v1/projects/my-proj/locations/us-east5/publishers/google/models/gemini-2.5-flash:generateContent',
    );
    expect(vertexGeminiUrl(t({ region: 'global' }), 'chat', true)).toBe(
      'https://aiplatform.googleapis.com/v1/projects/my-proj/locations/global/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
    );
    expect(vertexGeminiUrl(t({ upstreamModel: 'text-embedding-005' }), 'embeddings', false)).toMatch(
      /\/publishers\/google\/models\/text-embedding-005:predict$/,
    );
    const claude = t({ upstreamModel: 'claude-sonnet-4@20250514', baseUrl: 'https://psc.example.internal' });
    expect(vertexClaudeUrl(claude, 'messages', true)).toBe(
      'https://psc.example.internal/v1/projects/my-proj/locations/us-east5/publishers/anthropic/models/claude-sonnet-4@20250514:streamRawPredict',
    );
    expect(vertexClaudeUrl(claude, 'count_tokens', false)).toMatch(/\/publishers\/anthropic\/models\/count-tokens:rawPredict$/);
    expect(geminiApiUrl(t({ provider: 'gemini' }), 'chat', true)).toBe(
      'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
    );
    expect(geminiApiUrl(t({ provider: 'gemini', upstreamModel: 'a/b?c' }), 'chat', false)).toBe(
      'https://generativelanguage.googleapis.com/v1beta/models/a%2Fb%3Fc:generateContent',
    );
  });

  it('speak anthropic for claude-* models on Vertex and gemini for the others; the Claude body is a new one', () => {
    expect(vertex.protocolFor(t({ upstreamModel: 'claude-3-5-haiku@20241022' }))).toBe('anthropic');
    expect(vertex.protocolFor(t({ upstreamModel: 'gemini-2.5-pro' }))).toBe('gemini');
    const body = JSON.stringify({ model: 'claude-x', max_tokens: 5, messages: [] });
    expect(JSON.parse(vertexClaudeBody(body, 'messages'))).toEqual({ anthropic_version: 'vertex-2023-10-16', max_tokens: 5, messages: [] });
    expect(JSON.parse(vertexClaudeBody(body, 'count_tokens'))).toEqual({
      anthropic_version: 'vertex-2023-10-16',
      model: 'claude-x',
      max_tokens: 5,
      messages: [],
    });
  });
});

describe('the Gemini API provider', () => {
  it('sends the key in x-goog-api-key and returns the answer as it came', async () => {
    const o = await send(gemini, target({}));
    expect(o).toMatchObject({ kind: 'json', status: 200 });
    expect(JSON.parse(await text(o))).toMatchObject({
      candidates: [{ content: { parts: [{ text: GEMINI_FAKE_REPLY }] } }],
      usageMetadata: { promptTokenCount: 11 },
    });
    const call = google.calls.at(-1);
    expect(call?.path).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    expect(call?.headers['x-goog-api-key']).toBe(API_KEY);
    expect(call?.headers.authorization).toBeUndefined();
    expect(call?.body).toEqual(JSON.parse(BODY));
  });

  it('passes the alt=sse stream through', async () => {
    const o = await send(gemini, target({}), true);
    expect(o.kind).toBe('stream');
    const events = (await text(o)).split('\r\n\r\n').filter(Boolean);
    expect(events.length).toBeGreaterThan(1);
    expect(events.every((e) => e.startsWith('data: {'))).toBe(true);
    expect(JSON.parse(events.at(-1)?.slice(6) ?? '{}')).toMatchObject({ usageMetadata: { promptTokenCount: 11, candidatesTokenCount: 7 } });
  });

  it("keeps Google's status and error body: 429 with retry-after, 503, 400", async () => {
    google.enqueueGemini(
      { kind: 'status', status: 429, message: 'Resource has been exhausted (e.g. check quota).', retryAfter: '7' },
      { kind: 'status', status: 503, message: 'The model is overloaded. Please try again later.' },
      { kind: 'status', status: 400, message: 'Invalid value at generation_config.temperature' },
    );
    const a = await send(gemini, target({}));
    expect(a).toMatchObject({ kind: 'error', status: 429, retryAfter: '7' });
    expect(JSON.parse(await text(a))).toEqual({
      error: { code: 429, message: 'Resource has been exhausted (e.g. check quota).', status: 'RESOURCE_EXHAUSTED' },
    });
    expect(await send(gemini, target({}))).toMatchObject({ kind: 'error', status: 503 });
    expect(await send(gemini, target({}))).toMatchObject({ kind: 'error', status: 400 });
  });

  it('fails with credential_error without a key, naming the variable, not a value', async () => {
    const err = await send(gemini, target({ credential: { kind: 'env', name: 'NO_SUCH_GEMINI_KEY_VAR' } })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamFailure);
    expect(err).toMatchObject({ reason: 'credential_error', message: expect.stringContaining('NO_SUCH_GEMINI_KEY_VAR') as string });
  });

  it('with ambient credentials sends a bearer token for the cloud-platform and generative-language scopes', async () => {
    const o = await send(gemini, target({ credential: { kind: 'ambient' } }));
    expect(o).toMatchObject({ kind: 'json', status: 200 });
    expect(metadata.valid(String(google.calls.at(-1)?.headers.authorization).replace('Bearer ', ''))).toBe(true);
    expect(metadata.scopes.at(-1)).toBe('https://www.googleapis.com/auth/cloud-platform,https://www.googleapis.com/auth/generative-language');
  });
});

describe('the Vertex provider for Gemini models', () => {
  const vt = (): CompiledTarget => target({ provider: 'vertex', region: 'europe-west4', project: 'proj-9', credential: { kind: 'ambient' } });

  it('calls generateContent and streamGenerateContent?alt=sse with a bearer token and never an API key', async () => {
    const o = await send(vertex, vt());
    expect(o).toMatchObject({ kind: 'json', status: 200 });
    const call = google.calls.at(-1);
    expect(call?.path).toBe('/v1/projects/proj-9/locations/europe-west4/publishers/google/models/gemini-2.5-flash:generateContent');
    expect(call?.headers['x-goog-api-key']).toBeUndefined();
    expect(metadata.valid(String(call?.headers.authorization).replace('Bearer ', ''))).toBe(true);
    const s = await send(vertex, vt(), true);
    expect(s.kind).toBe('stream');
    expect(await text(s)).toContain(`"usageMetadata"`);
    expect(google.calls.at(-1)?.path).toMatch(/:streamGenerateContent\?alt=sse$/);
  });

  it('stops waiting for a token when the call is aborted (its client left, its timeout struck)', async () => {
    const t = target({ provider: 'vertex', region: 'us-east5', project: 'p', credential: { kind: 'ambient' } });
    // A fresh token source, so the token cached by the tests above is not used.
    const fresh = new VertexProvider(new GoogleTokens());
    metadata.stalling = true;
    try {
      const ctrl = new AbortController();
      const reason = new UpstreamFailure('timeout', 'no answer within 200 ms');
      setTimeout(() => ctrl.abort(reason), 200);
      const err = await fresh.send({ target: t, operation: 'chat', body: BODY, stream: false, headers: {}, signal: ctrl.signal }).catch((e: unknown) => e);
      expect(err).toBe(reason);
    } finally {
      metadata.stalling = false;
      await fresh.close();
    }
  });

  it('fails with credential_error (and calls nothing) when no token can be had', async () => {
    const calls = google.calls.length;
    const err = await send(vertex, target({ provider: 'vertex', region: 'us-east5', project: 'p', credential: { kind: 'bundle', value: '{}' } })).catch(
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ reason: 'credential_error', message: 'the credentials Secret has no key service-account.json' });
    expect(google.calls.length).toBe(calls);
  });
});
