// Claude on AWS Bedrock through the gateway, end to end: the official @anthropic-ai/sdk and openai clients call the
// gateway, which signs with SigV4 (or a Bedrock API key) and calls the fake Bedrock runtime's Invoke API (it verifies
// every signature). Plain and streamed, tools, count_tokens, embeddings (Titan, Cohere); usage and cost exact against
// what the fake reported, cache tokens included; a streamed call costs what the plain one does; throttling, a model
// timeout, a credential that cannot be obtained and exceptions before the first event fall back; a refused request
// reaches the client as its error; exceptions and broken frames mid-stream end the client's stream with an error; a
// client that leaves mid-stream leaves no request and no connection open at Bedrock.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic-upstream.ts';
import { BEDROCK_FAKE_REPLY, startFakeBedrock, type FakeBedrock } from '../fakes/bedrock/runtime.ts';
import { eventually, startGateway, type TestGateway } from '../helpers/gateway.ts';
import { basics, route, secret } from '../helpers/manifests.ts';
import { until } from '../helpers/until.ts';

const KEYS = { AWS_ACCESS_KEY_ID: 'AKIAFAKEGATEWAY00001', AWS_SECRET_ACCESS_KEY: 'fake-gateway-secret-key-0123456789' };
const API_KEY = 'bedrock-api-key-fake-ABSKQmVkcm9ja0FQSUtleQ';
const CLAUDE = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';
const NANO_IN = 1040; // pricing 1.04 USD per million input tokens
const NANO_OUT = 2080;

let bedrock: FakeBedrock;
let leaving: FakeBedrock;
let spare: FakeAnthropic;
let gw: TestGateway;
let anthropic: Anthropic;
let openai: OpenAI;

beforeAll(async () => {
  const fakeKeys = [{ accessKeyId: KEYS.AWS_ACCESS_KEY_ID, secretAccessKey: KEYS.AWS_SECRET_ACCESS_KEY }];
  [bedrock, leaving, spare] = await Promise.all([
    startFakeBedrock({ keys: fakeKeys, apiKeys: [API_KEY] }),
    startFakeBedrock({ keys: fakeKeys }),
    startFakeAnthropic('spare-anthropic'),
  ]);
  const b = basics();
  const aws = { secretKeyRef: { name: 'aws-keys' } };
  const bedrockTarget = (name: string, extra: object = {}): object => ({
    name,
    provider: 'bedrock',
    region: 'us-east-1',
    baseUrl: bedrock.url,
    upstreamModel: CLAUDE,
    credentials: aws,
    ...extra,
  });
  gw = await startGateway([
    ...b.docs,
    secret('aws-keys', KEYS),
    secret('aws-half', { AWS_ACCESS_KEY_ID: KEYS.AWS_ACCESS_KEY_ID }),
    secret('aws-wrong', { ...KEYS, AWS_SECRET_ACCESS_KEY: 'not-the-secret-0123456789' }),
    secret('bedrock-api-key', { key: API_KEY }),
    route('claude', [bedrockTarget('bedrock-use1') as never]),
    route('claude-ha', [bedrockTarget('bedrock-use1') as never, { name: 'spare', provider: 'anthropic', baseUrl: spare.baseUrl, weight: 0 }]),
    route('claude-nocred', [
      bedrockTarget('bedrock-nocred', { credentials: { secretKeyRef: { name: 'aws-half' } } }) as never,
      { name: 'spare', provider: 'anthropic', baseUrl: spare.baseUrl, weight: 0 },
    ]),
    route('claude-wrong', [bedrockTarget('bedrock-wrong', { credentials: { secretKeyRef: { name: 'aws-wrong' } } }) as never]),
    route('claude-apikey', [bedrockTarget('bedrock-apikey', { credentials: { secretKeyRef: { name: 'bedrock-api-key', key: 'key' } } }) as never]),
    route('claude-leaving', [bedrockTarget('bedrock-leaving', { baseUrl: leaving.url }) as never]),
    route('titan', [bedrockTarget('titan', { upstreamModel: 'amazon.titan-embed-text-v2:0' }) as never], { type: 'embeddings' }),
    route('cohere', [bedrockTarget('cohere', { upstreamModel: 'cohere.embed-english-v3' }) as never], { type: 'embeddings' }),
  ]);
  anthropic = new Anthropic({ baseURL: `${gw.url}/anthropic`, apiKey: b.keys.builder, maxRetries: 0 });
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: b.keys.builder, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([bedrock?.close(), leaving?.close(), spare?.close()]);
});

const ask = { model: 'claude', max_tokens: 200, messages: [{ role: 'user' as const, content: 'Say hi.' }] };
// Within what the prompts could have used (the gateway bounds a reported usage by the request's size).
const USAGE = { input: 12, output: 17, cacheRead: 40, cacheWrite: 8 };
const COST = (USAGE.input + USAGE.cacheRead + USAGE.cacheWrite) * NANO_IN + USAGE.output * NANO_OUT;

async function lastEvent(): Promise<NonNullable<TestGateway['sink']['events'][number]>> {
  const n = gw.sink.events.length;
  await eventually(() => gw.sink.events.length > n - 1 && gw.sink.events.at(-1) !== undefined);
  return gw.sink.events.at(-1)!;
}

describe('Claude on Bedrock through the Anthropic endpoint', () => {
  it('passes the Messages body through Invoke (no model, no stream, anthropic_version, anthropic_beta), signed, with exact usage and cost', async () => {
    bedrock.enqueue({ kind: 'reply', text: 'Hi from Bedrock.', usage: USAGE });
    const before = gw.sink.events.length;
    const msg = await anthropic.messages.create(
      {
        ...ask,
        max_tokens: 2048,
        system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
        thinking: { type: 'enabled', budget_tokens: 1024 },
      },
      { headers: { 'anthropic-beta': 'interleaved-thinking-2025-05-14, context-1m-2025-08-07' } },
    );
    expect(msg.content).toEqual([{ type: 'text', text: 'Hi from Bedrock.' }]);
    expect(msg.model).toBe('claude');
    expect(msg.usage).toMatchObject({ input_tokens: 12, output_tokens: 17, cache_read_input_tokens: 40, cache_creation_input_tokens: 8 });
    const call = bedrock.calls.at(-1)!;
    expect(call.action).toBe('invoke');
    expect(call.rawPath).toBe(`/model/${encodeURIComponent(CLAUDE)}/invoke`);
    expect(call.auth, 'SigV4 verified by the fake').toBe(KEYS.AWS_ACCESS_KEY_ID);
    expect(call.body).toEqual({
      anthropic_version: 'bedrock-2023-05-31',
      anthropic_beta: ['interleaved-thinking-2025-05-14', 'context-1m-2025-08-07'],
      max_tokens: 2048,
      messages: ask.messages,
      system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
      thinking: { type: 'enabled', budget_tokens: 1024 },
    });
    expect(call.headers['anthropic-beta'], 'betas travel in the body on Bedrock').toBeUndefined();
    await eventually(() => gw.sink.events.length > before);
    expect(gw.sink.events.at(-1)).toMatchObject({
      upstream: 'bedrock-use1',
      inputTokens: 60,
      outputTokens: 17,
      cacheReadTokens: 40,
      cacheWriteTokens: 8,
      costNano: COST,
      usageClamped: false,
      usageEstimated: false,
    });
  });

  it('streams (Invoke with response stream) the same answer at the same cost, frames split across TCP chunks', async () => {
    bedrock.splitFrames = true;
    bedrock.enqueue({ kind: 'reply', text: 'Hi from Bedrock.', usage: USAGE });
    const before = gw.sink.events.length;
    const stream = anthropic.messages.stream(ask);
    const text: string[] = [];
    stream.on('text', (t) => text.push(t));
    const final = await stream.finalMessage();
    bedrock.splitFrames = false;
    expect(text.join('')).toBe('Hi from Bedrock.');
    expect(final.usage).toMatchObject({ input_tokens: 12, output_tokens: 17, cache_read_input_tokens: 40 });
    expect(bedrock.calls.at(-1)?.action).toBe('invoke-with-response-stream');
    await eventually(() => gw.sink.events.length > before);
    expect(gw.sink.events.at(-1)).toMatchObject({ stream: true, status: 200, inputTokens: 60, outputTokens: 17, costNano: COST });
  });

  it('serves tool use, and count_tokens through Bedrock CountTokens', async () => {
    bedrock.enqueue({ kind: 'reply', tools: [{ id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }] });
    const tools = [{ name: 'get_weather', description: 'Weather', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } } }];
    const msg = await anthropic.messages.create({ ...ask, tools });
    expect(msg.stop_reason).toBe('tool_use');
    expect(msg.content).toEqual([{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }]);
    const counted = await anthropic.messages.countTokens({ model: 'claude', messages: ask.messages });
    expect(counted.input_tokens).toBeGreaterThan(0);
    const call = bedrock.calls.at(-1)!;
    expect(call.action).toBe('count-tokens');
    const inner = JSON.parse(Buffer.from((call.body as { input: { invokeModel: { body: string } } }).input.invokeModel.body, 'base64').toString()) as object;
    expect(inner).toEqual({ anthropic_version: 'bedrock-2023-05-31', messages: ask.messages, max_tokens: 1 });
  });

  it('authenticates with a Bedrock API key (Bearer, no SigV4)', async () => {
    const msg = await anthropic.messages.create({ ...ask, model: 'claude-apikey' });
    expect(msg.content[0]).toMatchObject({ text: BEDROCK_FAKE_REPLY });
    const call = bedrock.calls.at(-1)!;
    expect(call.auth).toBe('api-key');
    expect(call.headers['x-amz-date']).toBeUndefined();
  });
});

describe('Claude on Bedrock through the OpenAI endpoint', () => {
  it('answers chat completions, plain and streamed, with tools, at the same cost', async () => {
    bedrock.enqueue({ kind: 'reply', text: 'plain', usage: USAGE }, { kind: 'reply', text: 'plain', usage: USAGE });
    const before = gw.sink.events.length;
    const plain = await openai.chat.completions.create({ model: 'claude', messages: [{ role: 'user', content: 'hi' }] });
    expect(plain.choices[0]?.message.content).toBe('plain');
    expect(plain.usage).toMatchObject({ prompt_tokens: 60, completion_tokens: 17 });
    const s = await openai.chat.completions.create({
      model: 'claude',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    for await (const c of s) text += c.choices[0]?.delta.content ?? '';
    expect(text).toBe('plain');
    await eventually(() => gw.sink.events.length >= before + 2);
    const [a, b] = gw.sink.events.slice(-2);
    expect(a?.costNano).toBe(COST);
    expect(b?.costNano, 'the streamed call costs what the plain one does').toBe(COST);
    bedrock.enqueue({ kind: 'reply', tools: [{ id: 'toolu_2', name: 'lookup', input: { q: 'x' } }] });
    const tool = await openai.chat.completions.create({
      model: 'claude',
      messages: [{ role: 'user', content: 'look it up' }],
      tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } } }],
    });
    expect(tool.choices[0]?.finish_reason).toBe('tool_calls');
    expect(tool.choices[0]?.message.tool_calls?.[0]).toMatchObject({ id: 'toolu_2', function: { name: 'lookup', arguments: '{"q":"x"}' } });
  });

  it('embeds with Titan (one text) and Cohere (a batch), floats and base64, usage from Bedrock', async () => {
    const titan = await openai.embeddings.create({ model: 'titan', input: 'three little words', dimensions: 256, encoding_format: 'float' });
    expect(titan.data[0]?.embedding).toEqual([0.25, -0.5, 0, 1]);
    expect(titan.usage.prompt_tokens).toBe(3);
    expect(bedrock.calls.at(-1)?.body).toEqual({ inputText: 'three little words', dimensions: 256, normalize: true });
    const cohere = await openai.embeddings.create({ model: 'cohere', input: ['a b', 'c d e'] }); // the SDK asks base64 and decodes it
    expect(cohere.data.map((d) => d.embedding)).toEqual([
      [0.25, -0.5, 0, 1],
      [0.25, -0.5, 0.125, 1],
    ]);
    expect(cohere.usage.prompt_tokens).toBe(5);
    await expect(openai.embeddings.create({ model: 'titan', input: ['a', 'b'] })).rejects.toMatchObject({ status: 400, param: 'input' });
  });
});

describe('Bedrock failures', () => {
  const fallbackReason = async (model: string): Promise<{ reason: string | null; upstream: string | null; text: string }> => {
    const { data, response } = await anthropic.messages.create({ ...ask, model }).withResponse();
    const block = data.content[0];
    return {
      reason: response.headers.get('x-svc-fallback-reason'),
      upstream: response.headers.get('x-svc-upstream'),
      text: block?.type === 'text' ? block.text : '',
    };
  };

  it('falls back on throttling, a model not ready, unavailability and a model timeout', async () => {
    const cases = [
      [{ type: 'ThrottlingException', status: 429 }, 'upstream_429'],
      [{ type: 'ModelNotReadyException', status: 429 }, 'upstream_429'],
      [{ type: 'ServiceUnavailableException', status: 503 }, 'upstream_5xx'],
      [{ type: 'InternalServerException', status: 500 }, 'upstream_5xx'],
      [{ type: 'ModelTimeoutException', status: 408 }, 'timeout'],
    ] as const;
    for (const [err, reason] of cases) {
      bedrock.enqueue({ kind: 'error', ...err });
      expect(await fallbackReason('claude-ha'), err.type).toMatchObject({ reason, upstream: 'spare' });
    }
  });

  it('falls back when an exception frame or a broken frame comes before the first event', async () => {
    bedrock.enqueue({ kind: 'stream-exception', afterEvents: 0, type: 'throttlingException' });
    const throttled = await anthropic.messages.create({ ...ask, model: 'claude-ha', stream: true }).withResponse();
    for await (const ev of throttled.data) void ev;
    expect(throttled.response.headers.get('x-svc-upstream')).toBe('spare');
    // A throttling exception first in the stream is the upstream's 429, as when Bedrock answers 429 outright.
    expect(throttled.response.headers.get('x-svc-fallback-reason')).toBe('upstream_429');
    bedrock.enqueue({ kind: 'corrupt', afterEvents: 0 });
    const { response } = await anthropic.messages.create({ ...ask, model: 'claude-ha', stream: true }).withResponse();
    expect(response.headers.get('x-svc-upstream')).toBe('spare');
    expect(response.headers.get('x-svc-fallback-reason')).toBe('upstream_5xx');
  });

  it('a credential that cannot be obtained falls back with credential_error and names no secret', async () => {
    const r = await fallbackReason('claude-nocred');
    expect(r).toMatchObject({ reason: 'credential_error', upstream: 'spare' });
    expect(gw.sink.events.at(-1)).toMatchObject({ fallbackReason: 'credential_error' });
  });

  it('a refused signature is an upstream_error naming no credential', async () => {
    const err = (await anthropic.messages.create({ ...ask, model: 'claude-wrong' }).catch((e: unknown) => e)) as InstanceType<typeof Anthropic.APIError>;
    expect(err.status).toBe(502);
    const text = JSON.stringify(err.error);
    expect(text).toContain('refused the gateway');
    for (const secretText of [KEYS.AWS_SECRET_ACCESS_KEY, 'not-the-secret-0123456789', KEYS.AWS_ACCESS_KEY_ID]) expect(text).not.toContain(secretText);
    expect(bedrock.calls.at(-1)?.auth).toBe('InvalidSignatureException');
  });

  it('a ValidationException reaches the client as its invalid request, with Bedrock’s message', async () => {
    bedrock.enqueue({ kind: 'error', type: 'ValidationException', status: 400, message: 'messages.0.content: text must not be empty' });
    const err = (await anthropic.messages.create(ask).catch((e: unknown) => e)) as InstanceType<typeof Anthropic.APIError>;
    expect(err.status).toBe(400);
    expect(JSON.stringify(err.error)).toContain('text must not be empty');
  });

  it('an exception frame or a broken frame mid-stream ends the client’s stream with an error event', async () => {
    for (const b of [{ kind: 'stream-exception', afterEvents: 3, type: 'modelStreamErrorException' } as const, { kind: 'corrupt', afterEvents: 3 } as const]) {
      bedrock.enqueue(b);
      const spareCalls = spare.calls.length;
      const s = await anthropic.messages.create({ ...ask, stream: true });
      const seen: string[] = [];
      const read = async (): Promise<void> => {
        for await (const ev of s) seen.push(ev.type);
      };
      await expect(read(), b.kind).rejects.toThrow();
      expect(seen[0]).toBe('message_start');
      expect(spare.calls.length, 'no fallback once the client has events').toBe(spareCalls);
    }
  });

  it('a client that leaves mid-stream leaves no request and no connection open at Bedrock', async () => {
    const CALLS = 4;
    for (let i = 0; i < CALLS; i++) leaving.enqueue({ kind: 'reply', text: 'word '.repeat(100).trim(), chunkDelayMs: 100 });
    const ctrls = Array.from({ length: CALLS }, () => new AbortController());
    const counts = ctrls.map(() => 0);
    const done = Promise.all(
      ctrls
        .map(async (c, i) => {
          const s = await anthropic.messages.create({ ...ask, model: 'claude-leaving', stream: true }, { signal: c.signal });
          for await (const _ev of s) counts[i]!++;
        })
        .map((p) => p.catch(() => {})),
    );
    await until(() => counts.every((n) => n >= 3), 5000, 'every stream flowing');
    for (const c of ctrls) c.abort();
    await done;
    await until(() => leaving.open === 0 && leaving.sockets === 0, 1000, 'closed').catch(() => {});
    expect({ open: leaving.open, sockets: leaving.sockets }).toEqual({ open: 0, sockets: 0 });
    await lastEvent();
  });
});
