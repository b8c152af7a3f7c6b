// Fallback between clouds (issue 24): one gateway with a Bedrock target and a Vertex AI target, each authenticated
// the cloud's way (SigV4 from a Secret's key pair, verified by the fake Bedrock; a GKE metadata-server token, checked
// by the fake Vertex). A throttled Bedrock target falls back to Claude on Vertex, and a Llama model on Bedrock
// (Converse) whose every target fails falls back to a Gemini model on Vertex, with the official clients, plain and
// streamed; the answer says who served and why, and only the call that served is billed.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeBedrock, type FakeBedrock } from '../fakes/bedrock/runtime.ts';
import { startFakeMetadata, type FakeMetadata } from '../fakes/google/metadata.ts';
import { startFakeGoogle, type FakeGoogle } from '../fakes/google/vertex.ts';
import { basics, route, secret } from '../helpers/manifests.ts';
import type { GatewayProcess } from '../helpers/process.ts';
import { spentSince, monthSpend, startGoogleGateway } from './google-harness.ts';

const KEYS = { AWS_ACCESS_KEY_ID: 'AKIAFAKECROSSCLOUD01', AWS_SECRET_ACCESS_KEY: 'fake-cross-cloud-secret-0123456789' };

let bedrock: FakeBedrock;
let metadata: FakeMetadata;
let google: FakeGoogle;
let gw: GatewayProcess;
let anthropic: Anthropic;
let openai: OpenAI;
const b = basics();

beforeAll(async () => {
  metadata = await startFakeMetadata();
  [bedrock, google] = await Promise.all([
    startFakeBedrock({ keys: [{ accessKeyId: KEYS.AWS_ACCESS_KEY_ID, secretAccessKey: KEYS.AWS_SECRET_ACCESS_KEY }] }),
    startFakeGoogle({ bearer: (t) => metadata.valid(t), apiKeys: new Set() }),
  ]);
  const aws = { secretKeyRef: { name: 'aws-keys' } };
  gw = await startGoogleGateway(
    [
      ...b.docs,
      secret('aws-keys', KEYS),
      route('claude', [
        {
          name: 'bedrock-use1',
          provider: 'bedrock',
          region: 'us-east-1',
          baseUrl: bedrock.url,
          upstreamModel: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0',
          credentials: aws,
        },
        {
          name: 'vertex-global',
          provider: 'vertex',
          region: 'global',
          project: 'proj-1',
          baseUrl: google.url,
          upstreamModel: 'claude-sonnet-4-5@20250929',
          credentials: { ambient: {} },
          weight: 0,
        },
      ] as never),
      route(
        'llama',
        [
          {
            name: 'bedrock-llama',
            provider: 'bedrock',
            region: 'us-west-2',
            baseUrl: bedrock.url,
            upstreamModel: 'meta.llama3-1-8b-instruct-v1:0',
            credentials: aws,
          },
        ] as never,
        { fallbacks: ['gemini-flash'] },
      ),
      route('gemini-flash', [
        {
          name: 'vertex-gemini',
          provider: 'vertex',
          region: 'us-central1',
          project: 'proj-1',
          baseUrl: google.url,
          upstreamModel: 'gemini-2.5-flash',
          credentials: { ambient: {} },
        },
      ] as never),
    ],
    { GCE_METADATA_HOST: metadata.host },
  );
  anthropic = new Anthropic({ baseURL: `${gw.url}/anthropic`, apiKey: b.keys.builder, maxRetries: 0 });
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: b.keys.builder, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.stop();
  await Promise.all([bedrock?.close(), google?.close(), metadata?.close()]);
});

describe('a throttled Bedrock target falls back to Vertex', () => {
  it('Claude: Bedrock ThrottlingException -> Claude on Vertex, plain, billed once at what Vertex reported', async () => {
    bedrock.enqueue({ kind: 'error', type: 'ThrottlingException', status: 429, message: 'Too many requests, please wait before trying again.' });
    const bedrockCalls = bedrock.calls.length;
    const before = await monthSpend(gw, b.keys.builder);
    const servedBefore = { ...google.served };
    const { data, response } = await anthropic.messages
      .create({ model: 'claude', max_tokens: 50, messages: [{ role: 'user', content: 'Which cloud answers?' }] })
      .withResponse();
    expect(data.content[0]).toMatchObject({ type: 'text' });
    expect(response.headers.get('x-svc-upstream')).toBe('vertex-global');
    expect(response.headers.get('x-svc-fallback')).toBe('true');
    expect(response.headers.get('x-svc-fallback-reason')).toBe('upstream_429');
    // Bedrock was tried once (signed, refused with 429); Vertex served.
    expect(bedrock.calls.length - bedrockCalls).toBe(1);
    expect(bedrock.calls.at(-1)?.auth).toBe(KEYS.AWS_ACCESS_KEY_ID);
    const input = google.served.input - servedBefore.input;
    const output = google.served.output - servedBefore.output;
    expect(data.usage).toMatchObject({ output_tokens: output });
    // basics() prices (1.04 and 2.08 USD per million tokens, in nano-USD): the cost of exactly what Vertex served, nothing for Bedrock.
    expect(input).toBeGreaterThan(0);
    expect(await spentSince(gw, b.keys.builder, before)).toBe(input * 1040 + output * 2080);
  });

  it('Claude streamed: the stream comes from Vertex after Bedrock throttled', async () => {
    bedrock.enqueue({ kind: 'error', type: 'ThrottlingException', status: 429 });
    const { data: stream, response } = await anthropic.messages
      .stream({ model: 'claude', max_tokens: 50, messages: [{ role: 'user', content: 'Stream it.' }] })
      .withResponse();
    const msg = await stream.finalMessage();
    expect(msg.content[0]).toMatchObject({ type: 'text' });
    expect(response.headers.get('x-svc-upstream')).toBe('vertex-global');
    expect(response.headers.get('x-svc-fallback-reason')).toBe('upstream_429');
  });

  it('Llama on Bedrock (Converse) unavailable -> the Gemini fallback model on Vertex, through the OpenAI endpoint', async () => {
    bedrock.enqueue({ kind: 'error', type: 'ServiceUnavailableException', status: 503 });
    const { data, response } = await openai.chat.completions
      .create({ model: 'llama', max_tokens: 50, messages: [{ role: 'user', content: 'Hello' }] })
      .withResponse();
    expect(data.choices[0]?.message.content).toBeTruthy();
    expect(data.model).toBe('gemini-flash');
    expect(response.headers.get('x-svc-upstream')).toBe('vertex-gemini');
    expect(response.headers.get('x-svc-served-model')).toBe('gemini-flash');
    expect(response.headers.get('x-svc-original-model')).toBe('llama');
    expect(response.headers.get('x-svc-fallback-reason')).toBe('upstream_5xx');
    expect(bedrock.calls.at(-1)?.action).toMatch(/converse/);
  });
});
