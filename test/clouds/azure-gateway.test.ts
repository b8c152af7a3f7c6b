// The gateway in front of Azure OpenAI (the fake of test/fakes/azure, checked by the AzureOpenAI client first):
// the openai and Anthropic SDKs against azure-openai routes of both URL shapes with an api-key and with a service
// principal's client secret (ClientSecretCredential against the fake Entra ID); usage and cost exact; fallback from
// a throttled or unavailable Azure target; a credential that cannot be had fails over as credential_error; Azure's
// content filter answers reach the client as what they are and are never retried elsewhere; probes.
import tls from 'node:tls';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { probeTarget } from '../../gateway/availability/probe.ts';
import { ProviderRegistry } from '../../gateway/providers/registry.ts';
import { startFakeEntra, type FakeEntra } from '../fakes/azure/entra.ts';
import { AZURE_REPLY, FILTER_COMPLETION, FILTER_PROMPT, startFakeAzureOpenAI, type FakeAzureOpenAI } from '../fakes/azure/openai.ts';
import { startFakeUpstream, type FakeUpstream } from '../fakes/upstream.ts';
import { eventually, startGateway, type TestGateway } from '../helpers/gateway.ts';
import { basics, route, secret, type TargetSpec } from '../helpers/manifests.ts';

const KEY = 'azure-gw-test-api-key-5f1e2d3c4b5a';
const SP_SECRET = 'sp-client-secret-9a8b7c6d5e4f';
const WRONG_SECRET = 'sp-wrong-secret-0000111122223333';
const fast = { connectMs: 500, firstByteMs: 2000, idleMs: 2000, totalMs: 10_000 };
// The routes' price (helpers/manifests.ts route(): 1.04 and 2.08 USD per million tokens) in nano-USD per token.
const IN_NANO = 1040;
const OUT_NANO = 2080;

let entra: FakeEntra;
let azure: FakeAzureOpenAI;
let backup: FakeUpstream;
let gw: TestGateway;
let openai: OpenAI;
let anthropic: Anthropic;

beforeAll(async () => {
  entra = await startFakeEntra();
  tls.setDefaultCACertificates([...tls.getCACertificates('default'), entra.cert]);
  entra.register({ tenant: 'tenant-gw', clientId: 'sp-client', secret: SP_SECRET });
  entra.register({ tenant: 'tenant-gw', clientId: 'sp-stalled', secret: SP_SECRET });
  entra.register({ tenant: 'tenant-gw', clientId: 'sp-flood', secret: SP_SECRET });
  entra.stalled.add('sp-stalled');
  [azure, backup] = await Promise.all([
    startFakeAzureOpenAI({ apiKey: KEY, entra, deployments: { 'gpt-4o-prod': 'chat', 'embed-small': 'embeddings' } }),
    startFakeUpstream('backup'),
  ]);
  const b = basics();
  const az = (name: string, extra: Partial<TargetSpec> = {}): TargetSpec => ({
    name,
    provider: 'azure-openai',
    baseUrl: azure.url,
    upstreamModel: 'gpt-4o-prod',
    credentials: { secretKeyRef: { name: 'azure-key', key: 'api-key' } },
    timeouts: fast,
    ...extra,
  });
  const spSecret = (name: string, clientSecret: string, clientId = 'sp-client'): object =>
    secret(name, { AZURE_TENANT_ID: 'tenant-gw', AZURE_CLIENT_ID: clientId, AZURE_CLIENT_SECRET: clientSecret, AZURE_AUTHORITY_HOST: entra.url });
  const backupTarget = { name: 'backup', provider: 'openai' as const, baseUrl: backup.baseUrl, upstreamModel: 'gpt-backup', weight: 0, timeouts: fast };
  gw = await startGateway([
    ...b.docs,
    secret('azure-key', { 'api-key': KEY }),
    spSecret('azure-sp', SP_SECRET),
    spSecret('azure-sp-wrong', WRONG_SECRET),
    spSecret('azure-sp-stalled', SP_SECRET, 'sp-stalled'),
    spSecret('azure-sp-flood', WRONG_SECRET, 'sp-flood'),
    route('gpt-az', [az('az-v1', { responsesApi: true })]),
    route('gpt-az-dated', [az('az-dated', { apiVersion: '2024-10-21' })]),
    route('gpt-az-sp', [az('az-sp', { credentials: { secretKeyRef: { name: 'azure-sp' } } })]),
    route('embed-az', [az('az-embed', { upstreamModel: 'embed-small', apiVersion: '2024-10-21' })], { type: 'embeddings' }),
    route('gpt-az-fallback', [az('az-first', { weight: 1 }), backupTarget]),
    route('gpt-az-slowcred', [
      az('az-slowcred', { weight: 1, credentials: { secretKeyRef: { name: 'azure-sp-stalled' } }, timeouts: { ...fast, totalMs: 1000 } }),
      backupTarget,
    ]),
    route('gpt-az-badcred', [az('az-badcred', { weight: 1, credentials: { secretKeyRef: { name: 'azure-sp-wrong' } } }), backupTarget]),
    route('gpt-az-flood', [az('az-flood', { weight: 1, credentials: { secretKeyRef: { name: 'azure-sp-flood' } } }), backupTarget]),
  ]);
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: b.keys.builder, maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: `${gw.url}/anthropic`, apiKey: b.keys.builder, authToken: null, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await Promise.allSettled([azure?.close(), backup?.close(), entra?.close()]);
});

beforeEach(() => {
  azure.calls.length = 0;
  backup.calls.length = 0;
});

const lastEvent = (model: string) => gw.sink.events.filter((e) => e.requestedModel === model).at(-1);
const cost = (input: number, output: number): number => input * IN_NANO + output * OUT_NANO;

async function streamedText(
  model: string,
  content: string,
): Promise<{ text: string; finish: string | null; usage: OpenAI.CompletionUsage | null | undefined }> {
  let text = '';
  let finish: string | null = null;
  let usage: OpenAI.CompletionUsage | null | undefined;
  const s = await openai.chat.completions.create({ model, messages: [{ role: 'user', content }], stream: true, stream_options: { include_usage: true } });
  for await (const c of s) {
    text += c.choices[0]?.delta?.content ?? '';
    finish = c.choices[0]?.finish_reason ?? finish;
    if (c.usage) usage = c.usage;
  }
  return { text, finish, usage };
}

describe('the openai SDK through the gateway to Azure OpenAI', () => {
  it.each([
    ['gpt-az', '/openai/v1/chat/completions', 'api-key'],
    ['gpt-az-dated', '/openai/deployments/gpt-4o-prod/chat/completions?api-version=2024-10-21', 'api-key'],
    ['gpt-az-sp', '/openai/v1/chat/completions', 'bearer'],
  ])('%s: chat, plain and streamed, at %s with the %s credential; usage and cost exact, streamed = unstreamed', async (model, path, auth) => {
    const done = await openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] });
    expect(done.choices[0]?.message.content).toBe(AZURE_REPLY);
    expect(done.model).toBe(model);
    expect(done.usage).toMatchObject({ prompt_tokens: 13, completion_tokens: 9 });
    const plain = lastEvent(model);
    expect(plain).toMatchObject({
      status: 200,
      inputTokens: 13,
      outputTokens: 9,
      costNano: cost(13, 9),
      upstream: model === 'gpt-az-dated' ? 'az-dated' : expect.any(String),
    });
    const s = await streamedText(model, 'hi');
    expect(s).toMatchObject({ text: AZURE_REPLY, finish: 'stop' });
    expect(s.usage).toMatchObject({ prompt_tokens: 13, completion_tokens: 9 });
    await eventually(() => lastEvent(model)?.stream === true);
    expect(lastEvent(model)?.costNano).toBe(plain?.costNano);
    expect(azure.calls.map((c) => c.path)).toEqual([path, path]);
    const call = azure.calls[0];
    expect(call?.body.model).toBe('gpt-4o-prod');
    if (auth === 'api-key') {
      expect(call?.headers['api-key']).toBe(KEY);
      expect(call?.headers.authorization).toBeUndefined();
    } else {
      expect(call?.headers['api-key']).toBeUndefined();
      expect(String(call?.headers.authorization)).toMatch(/^Bearer fake-entra-/);
    }
  });

  it('GET /v1/models lists the Azure models like any other', async () => {
    const ids = [];
    for await (const m of openai.models.list()) ids.push(m.id);
    expect(ids).toEqual(expect.arrayContaining(['gpt-az', 'gpt-az-dated', 'gpt-az-sp', 'embed-az']));
  });

  it('tools: a tool call comes back parsed, plain and streamed', async () => {
    const tools: OpenAI.ChatCompletionTool[] = [
      { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
    ];
    azure.enqueue({ kind: 'reply', toolCalls: [{ name: 'get_weather', arguments: '{"city":"Oslo"}' }] });
    const done = await openai.chat.completions.create({ model: 'gpt-az', messages: [{ role: 'user', content: 'weather?' }], tools });
    expect(done.choices[0]?.finish_reason).toBe('tool_calls');
    expect(done.choices[0]?.message.tool_calls?.[0]).toMatchObject({ type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } });
    expect(azure.calls[0]?.body.tools).toEqual(tools);
    azure.enqueue({ kind: 'reply', toolCalls: [{ name: 'get_weather', arguments: '{"city":"Oslo"}' }] });
    const stream = openai.chat.completions.stream({ model: 'gpt-az', messages: [{ role: 'user', content: 'weather?' }], tools });
    const final = await stream.finalChatCompletion();
    expect(final.choices[0]?.message.tool_calls?.[0]?.function).toMatchObject({ name: 'get_weather', arguments: '{"city":"Oslo"}' });
  });

  it('embeddings on the dated API, usage and cost exact', async () => {
    const emb = await openai.embeddings.create({ model: 'embed-az', input: ['one', 'two'] });
    expect(emb.data.map((d) => d.embedding)).toEqual([
      [0.25, -0.5, 0.125, 0],
      [0.25, -0.5, 0.125, 1],
    ]);
    expect(azure.calls[0]?.path).toBe('/openai/deployments/embed-small/embeddings?api-version=2024-10-21');
    expect(lastEvent('embed-az')).toMatchObject({ inputTokens: 8, outputTokens: 0, costNano: cost(8, 0) });
  });

  it('responses: passed through to the v1 API (responsesApi), plain and streamed', async () => {
    const r = await openai.responses.create({ model: 'gpt-az', input: 'hi' });
    expect(r.output_text).toBe(AZURE_REPLY);
    expect(lastEvent('gpt-az')).toMatchObject({ endpoint: 'responses', inputTokens: 13, outputTokens: 9, costNano: cost(13, 9) });
    let text = '';
    for await (const e of await openai.responses.create({ model: 'gpt-az', input: 'hi', stream: true }))
      if (e.type === 'response.output_text.delta') text += e.delta;
    expect(text).toBe(AZURE_REPLY);
    expect(azure.calls.map((c) => c.path)).toEqual(['/openai/v1/responses', '/openai/v1/responses']);
  });

  it("responses to a dated-API target are translated to chat, streamed too (past Azure's first chunk without choices)", async () => {
    const r = await openai.responses.create({ model: 'gpt-az-dated', input: 'hi' });
    expect(r.output_text).toBe(AZURE_REPLY);
    let text = '';
    let usage: OpenAI.Responses.ResponseUsage | undefined;
    for await (const e of await openai.responses.create({ model: 'gpt-az-dated', input: 'hi', stream: true })) {
      if (e.type === 'response.output_text.delta') text += e.delta;
      if (e.type === 'response.completed') usage = e.response.usage;
    }
    expect(text).toBe(AZURE_REPLY);
    expect(usage).toMatchObject({ input_tokens: 13, output_tokens: 9 });
    expect(azure.calls.map((c) => c.path)).toEqual(Array(2).fill('/openai/deployments/gpt-4o-prod/chat/completions?api-version=2024-10-21'));
  });
});

describe('the Anthropic SDK through the gateway to Azure OpenAI', () => {
  it('messages, plain and streamed, with usage and cost exact', async () => {
    const msg = await anthropic.messages.create({ model: 'gpt-az', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] });
    expect(msg.content).toEqual([expect.objectContaining({ type: 'text', text: AZURE_REPLY })]);
    expect(msg.usage).toMatchObject({ input_tokens: 13, output_tokens: 9 });
    const plain = lastEvent('gpt-az');
    expect(plain).toMatchObject({ endpoint: 'messages', costNano: cost(13, 9) });
    const stream = anthropic.messages.stream({ model: 'gpt-az-dated', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] });
    const final = await stream.finalMessage();
    expect(final.content).toEqual([expect.objectContaining({ type: 'text', text: AZURE_REPLY })]);
    expect(final.stop_reason).toBe('end_turn');
    await eventually(() => lastEvent('gpt-az-dated')?.endpoint === 'messages');
    expect(lastEvent('gpt-az-dated')?.costNano).toBe(plain?.costNano);
  });

  it('tools through the Anthropic translation, streamed: a tool_use block with its input', async () => {
    azure.enqueue({ kind: 'reply', toolCalls: [{ name: 'get_weather', arguments: '{"city":"Oslo"}' }] });
    const final = await anthropic.messages
      .stream({
        model: 'gpt-az',
        max_tokens: 100,
        messages: [{ role: 'user', content: 'weather?' }],
        tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
      })
      .finalMessage();
    expect(final.stop_reason).toBe('tool_use');
    expect(final.content).toEqual([expect.objectContaining({ type: 'tool_use', name: 'get_weather', input: { city: 'Oslo' } })]);
  });
});

describe("Azure's content filter", () => {
  it('a filtered prompt is a 400 content_filter in the OpenAI dialect, and no other target is tried', async () => {
    const err = await openai.chat.completions
      .create({ model: 'gpt-az-fallback', messages: [{ role: 'user', content: `about ${FILTER_PROMPT}` }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('content_filter');
    expect((err as Error).message).toContain('content management policy');
    expect(azure.calls).toHaveLength(1);
    expect(backup.calls).toHaveLength(0);
    expect(lastEvent('gpt-az-fallback')).toMatchObject({ status: 400, errorCode: 'content_filter', costNano: 0, fallback: false });
  });

  it('a filtered prompt is a 400 invalid_request_error in the Anthropic dialect, and no other target is tried', async () => {
    const res = await fetch(`${gw.url}/anthropic/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': openai.apiKey ?? '', 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'gpt-az-fallback', max_tokens: 50, messages: [{ role: 'user', content: FILTER_PROMPT }] }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', message: expect.stringContaining('content management policy') },
    });
    expect(backup.calls).toHaveLength(0);
  });

  it('a filtered completion keeps finish_reason content_filter (OpenAI) and stops with refusal (Anthropic), streamed or not', async () => {
    const done = await openai.chat.completions.create({ model: 'gpt-az', messages: [{ role: 'user', content: FILTER_COMPLETION }] });
    expect(done.choices[0]?.finish_reason).toBe('content_filter');
    expect((await streamedText('gpt-az', FILTER_COMPLETION)).finish).toBe('content_filter');
    const msg = await anthropic.messages.create({ model: 'gpt-az', max_tokens: 50, messages: [{ role: 'user', content: FILTER_COMPLETION }] });
    expect(msg.stop_reason).toBe('refusal');
    const streamed = await anthropic.messages
      .stream({ model: 'gpt-az', max_tokens: 50, messages: [{ role: 'user', content: FILTER_COMPLETION }] })
      .finalMessage();
    expect(streamed.stop_reason).toBe('refusal');
    expect(backup.calls).toHaveLength(0);
  });
});

describe('fallback from Azure OpenAI', () => {
  it.each([
    [429, 'upstream_429'],
    [503, 'upstream_5xx'],
  ])('an Azure target answering %i falls back to the next target (%s)', async (status, reason) => {
    azure.enqueue({
      kind: 'status',
      status,
      body: {
        error: { code: status === 429 ? '429' : 'ServiceUnavailable', message: 'Requests to the ChatCompletions_Create Operation have exceeded a limit.' },
      },
      retryAfter: '2',
    });
    const { data, response } = await openai.chat.completions.create({ model: 'gpt-az-fallback', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(data.choices[0]?.message.content).toBe('Hello from the fake upstream.');
    expect(response.headers.get('x-svc-upstream')).toBe('backup');
    expect(response.headers.get('x-svc-fallback-reason')).toBe(reason);
    expect(azure.calls).toHaveLength(1);
  });

  it('a client secret Entra ID refuses fails over as credential_error, nothing secret in the answer', async () => {
    const { data, response } = await openai.chat.completions.create({ model: 'gpt-az-badcred', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(data.choices[0]?.message.content).toBe('Hello from the fake upstream.');
    expect(response.headers.get('x-svc-fallback-reason')).toBe('credential_error');
    expect(azure.calls).toHaveLength(0);
    expect(JSON.stringify([data, [...response.headers]])).not.toContain(WRONG_SECRET);
    expect(entra.tokenRequests.at(-1)).toMatchObject({ clientId: 'sp-client', proof: 'bad' });
  });

  it('a refused client secret is asked for once per back-off: 8 calls in a row make 1 token request, each call falls over', async () => {
    for (let i = 0; i < 8; i++) {
      const { response } = await openai.chat.completions.create({ model: 'gpt-az-flood', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
      expect(response.headers.get('x-svc-fallback-reason')).toBe('credential_error');
    }
    // Before the common back-off (gateway/providers/credential-backoff.ts): 8, one per call.
    expect(entra.tokenRequests.filter((r) => r.clientId === 'sp-flood')).toHaveLength(1);
    expect(azure.calls).toHaveLength(0);
  });

  it("a token endpoint that never answers ends with the target's total timeout, and the call falls back", async () => {
    const { data, response } = await openai.chat.completions.create({ model: 'gpt-az-slowcred', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(data.choices[0]?.message.content).toBe('Hello from the fake upstream.');
    expect(response.headers.get('x-svc-fallback-reason')).toBe('timeout');
    expect(entra.tokenRequests.some((r) => r.clientId === 'sp-stalled')).toBe(true);
    expect(azure.calls).toHaveLength(0);
  });
});

describe('probes of Azure OpenAI targets', () => {
  it('a probe reaches the target with its credential; a refused credential says credential error, without the secret', async () => {
    const providers = new ProviderRegistry();
    try {
      const model = gw.snapshot.models['gpt-az-dated'];
      const ok = await probeTarget(providers, model!, model!.targets[0]!, Date.now());
      expect(ok).toMatchObject({ ok: true, status: 200 });
      expect(azure.calls.at(-1)?.path).toBe('/openai/deployments/gpt-4o-prod/chat/completions?api-version=2024-10-21');
      const bad = gw.snapshot.models['gpt-az-badcred'];
      const refused = await probeTarget(
        providers,
        bad!,
        bad!.targets.find((t) => t.name === 'az-badcred')!,
        Date.now(),
      );
      expect(refused).toMatchObject({ ok: false, message: expect.stringContaining('credential error') });
      expect(refused.message).toContain('AADSTS7000215');
      expect(refused.message).not.toContain(WRONG_SECRET);
    } finally {
      await providers.close();
    }
  });
});
