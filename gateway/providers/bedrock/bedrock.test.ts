// Bedrock's transport pieces on their own: which API a model id takes, the Invoke body, the error mapping, and the
// event-stream decoder (frames split anywhere, several to a chunk, a broken CRC, exceptions).
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { describe, expect, it } from 'vitest';
import type { CompiledTarget } from '../../contract/snapshot.ts';
import { UpstreamFailure } from '../types.ts';
import { FIRST_HOLD_MS } from '../credential-backoff.ts';
import { identity, memoizeCredentials } from './credentials.ts';
import { bedrockError, errorTypeName } from './errors.ts';
import { eventStreamToSse } from './event-stream.ts';
import { converseCountTokensBody, countTokensBody, invokeBody } from './invoke-body.ts';
import { actionUrl, isAnthropicModel } from './urls.ts';

const codec = new EventStreamCodec(toUtf8, fromUtf8);
const s = (value: string): { type: 'string'; value: string } => ({ type: 'string', value });
const frame = (type: string, payload: unknown): Uint8Array =>
  codec.encode({
    headers: { ':event-type': s(type), ':message-type': s('event'), ':content-type': s('application/json') },
    body: fromUtf8(JSON.stringify(payload)),
  });

async function sse(chunks: Uint8Array[], kind: 'converse' | 'invoke'): Promise<string> {
  let out = '';
  for await (const piece of eventStreamToSse(
    (async function* () {
      yield* chunks;
    })(),
    kind,
  ))
    out += piece;
  return out;
}

describe('which API a Bedrock model id takes', () => {
  it.each([
    ['anthropic.claude-sonnet-4-5-20250929-v1:0', true],
    ['us.anthropic.claude-sonnet-4-5-20250929-v1:0', true],
    ['global.anthropic.claude-haiku-4-5-20251001-v1:0', true],
    ['arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-haiku-20240307-v1:0', true],
    ['arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-5-20250929-v1:0', true],
    ['meta.llama3-1-8b-instruct-v1:0', false],
    ['amazon.nova-pro-v1:0', false],
    ['arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc123', false],
    ['mistral.notanthropic.x', false],
  ])('%s → Invoke with the Anthropic body: %s', (id, anthropic) => {
    expect(isAnthropicModel(id)).toBe(anthropic);
  });

  it('puts the whole model id, ARN included, in one URL-encoded path segment of the region’s endpoint', () => {
    const t = {
      upstreamModel: 'arn:aws:bedrock:us-west-2:1:inference-profile/us.anthropic.claude-x-v1:0',
      region: 'us-west-2',
      baseUrl: null,
    } as CompiledTarget;
    expect(actionUrl(t, 'invoke')).toBe(
      'https://bedrock-runtime.us-west-2.amazonaws.com/model/arn%3Aaws%3Abedrock%3Aus-west-2%3A1%3Ainference-profile%2Fus.anthropic.claude-x-v1%3A0/invoke',
    );
    expect(actionUrl({ ...t, baseUrl: 'http://127.0.0.1:9/' }, 'converse-stream')).toMatch(/^http:\/\/127\.0\.0\.1:9\/model\/[^/]+\/converse-stream$/);
  });
});

describe('the Invoke body of a Claude call', () => {
  it('drops model and stream, adds anthropic_version and the betas, and leaves the input alone', () => {
    const body = JSON.stringify({ model: 'm', stream: true, max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });
    const headers = { 'anthropic-beta': 'a-1, b-2' };
    expect(invokeBody(body, headers)).toEqual({
      anthropic_version: 'bedrock-2023-05-31',
      anthropic_beta: ['a-1', 'b-2'],
      max_tokens: 5,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(headers).toEqual({ 'anthropic-beta': 'a-1, b-2' });
    const counted = JSON.parse(countTokensBody(JSON.stringify({ model: 'm', messages: [] }), {})) as { input: { invokeModel: { body: string } } };
    expect(JSON.parse(Buffer.from(counted.input.invokeModel.body, 'base64').toString())).toEqual({
      anthropic_version: 'bedrock-2023-05-31',
      messages: [],
      max_tokens: 1,
    });
    const conv = { messages: [{ role: 'user', content: [{ text: 'hi' }] }], system: [{ text: 's' }], inferenceConfig: { maxTokens: 5 } };
    expect(JSON.parse(converseCountTokensBody(JSON.stringify(conv)))).toEqual({ input: { converse: { messages: conv.messages, system: conv.system } } });
  });
});

describe('Bedrock errors', () => {
  it('maps the error types to the statuses the fallback knows', () => {
    const status = (type: string, st: number): number => {
      const o = bedrockError(st, `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`, '{"message":"m"}', undefined, 'converse');
      return o.kind === 'error' ? o.status : 0;
    };
    expect(status('ThrottlingException', 429)).toBe(429);
    expect(status('ModelNotReadyException', 429)).toBe(429);
    expect(status('ServiceUnavailableException', 503)).toBe(503);
    expect(status('ValidationException', 400)).toBe(400);
    expect(status('AccessDeniedException', 403)).toBe(403);
    expect(() => status('ModelTimeoutException', 408)).toThrow(UpstreamFailure);
    expect(errorTypeName('com.amazon.coral.service#ExpiredTokenException')).toBe('ExpiredTokenException');
  });

  it('gives Anthropic’s error shape for Claude and keeps Bedrock’s for Converse, read from __type when the header is absent', () => {
    const claude = bedrockError(400, undefined, '{"__type":"ValidationException","message":"bad"}', undefined, 'anthropic');
    expect(claude.kind === 'error' && JSON.parse(claude.body)).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: 'bad' } });
    const conv = bedrockError(429, 'ThrottlingException', '{"message":"slow down"}', '3', 'converse');
    expect(conv).toEqual({ kind: 'error', status: 429, retryAfter: '3', body: JSON.stringify({ message: 'slow down', __type: 'ThrottlingException' }) });
  });
});

describe('event-stream frames to SSE', () => {
  const frames = [
    frame('messageStart', { role: 'assistant' }),
    frame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'héllo' } }),
    frame('messageStop', { stopReason: 'end_turn' }),
  ];
  const whole = Buffer.concat(frames);
  const expected =
    'event: messageStart\ndata: {"role":"assistant"}\n\n' +
    'event: contentBlockDelta\ndata: {"contentBlockIndex":0,"delta":{"text":"héllo"}}\n\n' +
    'event: messageStop\ndata: {"stopReason":"end_turn"}\n\n';

  it('decodes frames however the bytes are cut: one byte at a time, all in one chunk', async () => {
    expect(await sse([whole], 'converse')).toBe(expected);
    expect(
      await sse(
        [...whole].map((b) => Uint8Array.of(b)),
        'converse',
      ),
    ).toBe(expected);
    expect(await sse([whole.subarray(0, 7), whole.subarray(7, 70), whole.subarray(70)], 'converse')).toBe(expected);
  });

  it('ends with an error event at a frame whose CRC does not match, and at a cut frame', async () => {
    const bad = Buffer.from(whole);
    bad[frames[0]!.length + 20]! ^= 0xff;
    const out = await sse([bad], 'converse');
    expect(out.startsWith('event: messageStart\n')).toBe(true);
    expect(out.endsWith('\n\n') && out.split('event: ').at(-1)?.startsWith('error\n')).toBe(true);
    expect(out).not.toContain('messageStop');
    const cut = await sse([whole.subarray(0, whole.length - 3)], 'converse');
    expect(cut).toContain('event: error\n');
  });

  it('turns exception frames into error events, in Anthropic’s shape for Invoke', async () => {
    const exc = codec.encode({
      headers: { ':exception-type': s('throttlingException'), ':message-type': s('exception'), ':content-type': s('application/json') },
      body: fromUtf8('{"message":"slow down"}'),
    });
    expect(await sse([exc, frames[2]!], 'converse')).toBe('event: error\ndata: {"type":"ThrottlingException","message":"slow down"}\n\n');
    expect(await sse([exc], 'invoke')).toBe('event: error\ndata: {"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}\n\n');
  });

  it('unwraps Invoke chunks into Anthropic SSE events', async () => {
    const ev = { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'hi' } };
    const chunk = frame('chunk', { bytes: Buffer.from(JSON.stringify(ev)).toString('base64') });
    expect(await sse([chunk], 'invoke')).toBe(`event: content_block_delta\ndata: ${JSON.stringify(ev)}\n\n`);
  });
});

describe('memoized credentials', () => {
  it('fetches once, again only within 5 minutes of expiry, one fetch at a time', async () => {
    let now = 0;
    let fetches = 0;
    const p = memoizeCredentials(
      () => {
        fetches++;
        return Promise.resolve({ accessKeyId: `k${fetches}`, secretAccessKey: 's', expiration: new Date(now + 15 * 60_000) });
      },
      () => now,
    );
    await Promise.all([p(), p(), p()]);
    expect(fetches).toBe(1);
    now += 9 * 60_000;
    expect((await p()).accessKeyId).toBe('k1');
    now += 2 * 60_000;
    expect((await p()).accessKeyId).toBe('k2');
    expect(fetches).toBe(2);
  });
});

describe('a credential that cannot be obtained', () => {
  it('is a credential_error naming the target, asked again only after a while', async () => {
    let now = 0;
    let asked = 0;
    const provider = (): Promise<never> => {
      asked++;
      return Promise.reject(Object.assign(new Error('Could not load credentials from any providers'), { name: 'CredentialsProviderError' }));
    };
    const t = { name: 'bedrock-use1' } as CompiledTarget;
    await expect(identity(t, provider, () => now)).rejects.toMatchObject({
      reason: 'credential_error',
      message: expect.stringContaining('bedrock-use1') as unknown,
    });
    await expect(identity(t, provider, () => now)).rejects.toBeInstanceOf(UpstreamFailure);
    expect(asked).toBe(1);
    now += FIRST_HOLD_MS + 1;
    await expect(identity(t, provider, () => now)).rejects.toBeInstanceOf(UpstreamFailure);
    expect(asked).toBe(2);
  });
});
