// An upstream that quotes the credential it was sent in an error text ("quota error for key <bearer>"), mid-stream
// after a first chunk, for every provider kind that streams (openai, anthropic, bedrock, azure-openai, the Gemini API,
// and Vertex AI with a token from the metadata server), to clients of the three dialects through the official SDKs:
// the credential, and any 8-character piece of it, is in no byte a client receives and in no line the gateway logs.
// A refused request whose message quotes a key's first 13 characters (as OpenAI's "Incorrect API key" does) too.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic-upstream.ts';
import { startFakeAzureOpenAI, type FakeAzureOpenAI } from '../fakes/azure/openai.ts';
import { startFakeBedrock, type FakeBedrock } from '../fakes/bedrock/runtime.ts';
import { startFakeMetadata, type FakeMetadata } from '../fakes/google/metadata.ts';
import { startFakeGoogle, type FakeGoogle } from '../fakes/google/vertex.ts';
import { startFakeUpstream, type FakeUpstream } from '../fakes/upstream.ts';
import { basics, route, secret, type TargetSpec } from '../helpers/manifests.ts';
import type { GatewayProcess } from '../helpers/process.ts';
import { startGoogleGateway } from '../clouds/google-harness.ts';

const CREDS = {
  openai: 'sk-proj-Q7wErTy8uIoP2aSdFg5hJkL3zXcVb9nM',
  anthropic: 'sk-ant-api03-Zx8Cv7Bn6Mq5Wr4Et3Yu2Io1PaSdFgHj',
  bedrock: 'ABSKQmVkcm9ja0FQSUtleS1leGFtcGxlLTEyMzQ1Njc4OTA',
  azure: '9f8e7d6c5b4a39281706f5e4d3c2b1a0',
  gemini: 'AIzaSyD-EchoedGeminiKey0123456789abcdef',
};

let openaiUp: FakeUpstream;
let anthropicUp: FakeAnthropic;
let bedrock: FakeBedrock;
let azure: FakeAzureOpenAI;
let google: FakeGoogle;
let metadata: FakeMetadata;
let gw: GatewayProcess;
const keys = basics();

const cred = (key: keyof typeof CREDS): TargetSpec['credentials'] => ({ secretKeyRef: { name: 'upstream-creds', key } });
const MODELS = ['m-openai', 'm-anthropic', 'm-bedrock', 'm-azure', 'm-gemini', 'm-vertex'] as const;

beforeAll(async () => {
  [openaiUp, anthropicUp, bedrock, azure, metadata] = await Promise.all([
    startFakeUpstream('echo-openai'),
    startFakeAnthropic('echo-anthropic'),
    startFakeBedrock({ apiKeys: [CREDS.bedrock] }),
    startFakeAzureOpenAI({ apiKey: CREDS.azure, deployments: { 'gpt-4o-prod': 'chat' } }),
    startFakeMetadata(),
  ]);
  google = await startFakeGoogle({ bearer: (t) => metadata.valid(t), apiKeys: new Set([CREDS.gemini]) });
  // Every streamed answer: one chunk, then an error that quotes the credential.
  openaiUp.fallback = () => ({ kind: 'error-event', afterChunks: 1, echo: true });
  anthropicUp.fallback = () => ({ kind: 'error-event', afterEvents: 4, echo: true });
  google.geminiFallback = () => ({ kind: 'error-event', afterChunks: 1, echo: true });
  const chunk = {
    id: 'chatcmpl-az',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'gpt-4o',
    choices: [{ index: 0, delta: { role: 'assistant', content: 'Hi' }, finish_reason: null }],
  };
  azure.fallback = () => ({
    kind: 'raw',
    status: 200,
    contentType: 'text/event-stream',
    body: `data: ${JSON.stringify(chunk)}\n\ndata: ${JSON.stringify({ error: { code: '429', message: `quota error for key ${CREDS.azure}` } })}\n\n`,
  });
  const target = (name: string, extra: Omit<TargetSpec, 'name'>): TargetSpec => ({ name, ...extra });
  gw = await startGoogleGateway(
    [
      ...keys.docs,
      secret('upstream-creds', CREDS),
      route('m-openai', [target('t-openai', { provider: 'openai', baseUrl: openaiUp.baseUrl, upstreamModel: 'gpt-up', credentials: cred('openai') })]),
      route('m-anthropic', [
        target('t-anthropic', { provider: 'anthropic', baseUrl: anthropicUp.baseUrl, upstreamModel: 'claude-up', credentials: cred('anthropic') }),
      ]),
      route('m-bedrock', [
        target('t-bedrock', {
          provider: 'bedrock',
          region: 'us-east-1',
          baseUrl: bedrock.url,
          upstreamModel: 'amazon.nova-lite-v1:0',
          credentials: cred('bedrock'),
        }),
      ]),
      route('m-azure', [target('t-azure', { provider: 'azure-openai', baseUrl: azure.url, upstreamModel: 'gpt-4o-prod', credentials: cred('azure') })]),
      route('m-gemini', [target('t-gemini', { provider: 'gemini', baseUrl: google.url, upstreamModel: 'gemini-2.5-flash', credentials: cred('gemini') })]),
      route('m-vertex', [
        target('t-vertex', {
          provider: 'vertex',
          region: 'global',
          project: 'proj-1',
          baseUrl: google.url,
          upstreamModel: 'gemini-2.5-flash',
          credentials: { ambient: {} },
        }),
      ]),
    ],
    { GCE_METADATA_HOST: metadata.host, SVC_PROBE_INTERVAL_SECONDS: '86400' },
  );
}, 60_000);

afterAll(async () => {
  await gw?.stop();
  await Promise.allSettled([openaiUp?.close(), anthropicUp?.close(), bedrock?.close(), azure?.close(), google?.close(), metadata?.close()]);
});

/** Every byte the clients received, as text. */
const received: string[] = [];

/** The SDKs' fetch, keeping a copy of each answer's bytes. */
const recordingFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
  const res = await fetch(input, init);
  const text = await res.text();
  received.push(text);
  return new Response(text, { status: res.status, statusText: res.statusText, headers: res.headers });
};

const openai = (): OpenAI => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: keys.keys.builder, maxRetries: 0, fetch: recordingFetch });
const anthropic = (): Anthropic =>
  new Anthropic({ baseURL: `${gw.url}/anthropic`, apiKey: keys.keys.builder, authToken: null, maxRetries: 0, fetch: recordingFetch });

/** The texts a client saw of a stream (its chunks and the error it raised), and whether it raised one. */
async function drain(stream: () => Promise<AsyncIterable<unknown> | Iterable<unknown>>): Promise<{ seen: string; failed: boolean }> {
  let seen = '';
  try {
    for await (const chunk of await stream()) seen += JSON.stringify(chunk);
    return { seen, failed: false };
  } catch (err) {
    return { seen: seen + String(err) + JSON.stringify(err), failed: true };
  }
}

/** The secrets of this test: the upstream credentials, and every token the metadata server issued. */
const secrets = (): string[] => [...Object.values(CREDS), ...metadata.issued];

/** Every 8-character piece of any secret that `text` holds. */
function leaks(text: string): string[] {
  const out = new Set<string>();
  for (const s of secrets()) for (let i = 0; i + 8 <= s.length; i++) if (text.includes(s.slice(i, i + 8))) out.add(s.slice(0, 6) + '…');
  return [...out];
}

const ask = { role: 'user' as const, content: 'Tell me something.' };

describe.each(MODELS)('an upstream that echoes its credential mid-stream (%s)', (model) => {
  let mark = 0;
  beforeEach(() => {
    mark = received.length;
    // The fake Bedrock answers from its queue only: one chunk, then an exception frame that quotes the API key.
    if (model === 'm-bedrock')
      bedrock.enqueue({ kind: 'stream-exception', afterEvents: 2, type: 'ServiceUnavailableException', message: `quota error for key ${CREDS.bedrock}` });
  });
  const since = (): string => received.slice(mark).join('');

  it('Chat client: an explicit error, without the credential', async () => {
    const r = await drain(() => openai().chat.completions.create({ model, messages: [ask], stream: true }));
    expect(r.failed).toBe(true);
    expect(leaks(r.seen + since())).toEqual([]);
  });

  it('Anthropic client: an error event, without the credential', async () => {
    const r = await drain(() => anthropic().messages.create({ model, max_tokens: 100, messages: [ask], stream: true }));
    expect(r.failed).toBe(true);
    expect(leaks(r.seen + since())).toEqual([]);
  });

  it('Responses client: response.failed and an error event, without the credential', async () => {
    const r = await drain(() => openai().responses.create({ model, input: 'Tell me something.', stream: true }));
    expect(r.failed).toBe(true);
    expect(since()).toContain('response.failed');
    expect(leaks(r.seen + since())).toEqual([]);
  });
});

describe('the rest of what a client or a log could hold', () => {
  it('a refused request whose message quotes the first 13 characters and the last 4 of the key', async () => {
    const mark = received.length;
    openaiUp.enqueue({
      kind: 'status',
      status: 400,
      body: { error: { message: `Incorrect API key provided: ${CREDS.openai.slice(0, 13)}****${CREDS.openai.slice(-4)}.`, type: 'invalid_request_error' } },
    });
    const r = await drain(async () =>
      openai()
        .chat.completions.create({ model: 'm-openai', messages: [ask] })
        .then(() => []),
    );
    expect(r.seen).toContain('Incorrect API key provided');
    expect(leaks(r.seen + received.slice(mark).join(''))).toEqual([]);
  });

  it("a provider's failure that quotes the upstream's text (Bedrock's model timeout) ends the call without the key", async () => {
    const mark = received.length;
    bedrock.enqueue({ kind: 'error', type: 'ModelTimeoutException', status: 408, message: `timed out for key ${CREDS.bedrock}` });
    const r = await drain(async () =>
      openai()
        .chat.completions.create({ model: 'm-bedrock', messages: [ask] })
        .then(() => []),
    );
    expect(r.seen).toContain('timed out for key');
    expect(leaks(r.seen + received.slice(mark).join(''))).toEqual([]);
  });

  it('the credentials reached the fakes (the test tested something), and no log line holds a piece of one', () => {
    expect(metadata.issued.length).toBeGreaterThan(0);
    expect(openaiUp.calls.some((c) => c.headers.authorization === `Bearer ${CREDS.openai}`)).toBe(true);
    expect(received.length).toBeGreaterThanOrEqual(MODELS.length * 3);
    expect(leaks(gw.output())).toEqual([]);
  });
});
