// Each fallback trigger, the headers it produces, and what happens after the first byte.
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../fakes/upstream.ts';
import { eventually, startGateway, type TestGateway } from '../helpers/gateway.ts';
import { basics, route } from '../helpers/manifests.ts';

let primary: FakeUpstream;
let secondary: FakeUpstream;
let backup: FakeUpstream;
let gw: TestGateway;
let client: OpenAI;
const CLOSED_PORT_URL = 'http://127.0.0.1:9/v1'; // discard port: nothing listens, connection refused
const fast = { connectMs: 500, firstByteMs: 300, idleMs: 300, totalMs: 5000 };

beforeAll(async () => {
  [primary, secondary, backup] = await Promise.all([startFakeUpstream('primary'), startFakeUpstream('secondary'), startFakeUpstream('backup')]);
  const b = basics();
  gw = await startGateway([
    ...b.docs,
    // weight 1 vs 0: "primary" is always tried first, "secondary" second.
    route(
      'smart',
      [
        { name: 'primary', provider: 'openai', baseUrl: primary.baseUrl, weight: 1, timeouts: fast },
        { name: 'secondary', provider: 'openai', baseUrl: secondary.baseUrl, weight: 0, timeouts: fast },
      ],
      { fallbacks: ['cheap'] },
    ),
    route('cheap', [{ name: 'backup', provider: 'openai', baseUrl: backup.baseUrl, timeouts: fast }]),
    route('dead', [{ name: 'nowhere', provider: 'openai', baseUrl: CLOSED_PORT_URL, timeouts: fast }]),
    route('slow', [{ name: 'staller', provider: 'openai', baseUrl: primary.baseUrl, timeouts: fast }]),
    route('busy', [{ name: 'limited', provider: 'openai', baseUrl: primary.baseUrl, timeouts: fast }]),
  ]);
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: b.keys.builder, maxRetries: 0 });
});

afterAll(async () => {
  await gw.close();
  await Promise.all([primary.close(), secondary.close(), backup.close()]);
});

beforeEach(() => {
  for (const f of [primary, secondary, backup]) {
    f.fallback = () => ({ kind: 'reply' });
    f.calls.length = 0;
  }
});

async function call(model: string, stream = false) {
  const messages = [{ role: 'user' as const, content: 'hi' }];
  if (stream) {
    const { data, response } = await client.chat.completions.create({ model, messages, stream: true }).withResponse();
    let text = '';
    for await (const c of data) text += c.choices[0]?.delta.content ?? '';
    return { text, headers: response.headers, model: null };
  }
  const { data, response } = await client.chat.completions.create({ model, messages }).withResponse();
  return { text: data.choices[0]?.message.content ?? '', headers: response.headers, model: data.model };
}

function fallbackHeaders(h: Headers) {
  return Object.fromEntries(
    ['x-svc-upstream', 'x-svc-served-model', 'x-svc-original-model', 'x-svc-fallback', 'x-svc-fallback-reason'].map((k) => [k, h.get(k)]),
  );
}

describe.each([false, true])('before the first byte (stream: %s)', (stream) => {
  it.each([
    ['upstream_5xx', { kind: 'status', status: 500 } as const],
    ['upstream_5xx', { kind: 'status', status: 503 } as const],
    ['upstream_429', { kind: 'status', status: 429, retryAfter: '3' } as const],
    ['timeout', { kind: 'stall' } as const],
    ['connect_error', { kind: 'cut', afterChunks: 0 } as const],
  ])('falls back to the next target on %s', async (reason, behavior) => {
    primary.fallback = () => behavior;
    const r = await call('smart', stream);
    expect(r.text).toBe('Hello from the fake upstream.');
    expect(fallbackHeaders(r.headers)).toEqual({
      'x-svc-upstream': 'secondary',
      'x-svc-served-model': 'smart',
      'x-svc-original-model': 'smart',
      'x-svc-fallback': 'true',
      'x-svc-fallback-reason': reason,
    });
    expect(secondary.calls).toHaveLength(1);
  });

  it('falls back to the fallback model after every target failed; the body names the model that served', async () => {
    primary.fallback = () => ({ kind: 'status', status: 502 });
    secondary.fallback = () => ({ kind: 'status', status: 500 });
    const r = await call('smart', stream);
    expect(r.text).toBe('Hello from the fake upstream.');
    if (!stream) expect(r.model).toBe('cheap');
    expect(fallbackHeaders(r.headers)).toEqual({
      'x-svc-upstream': 'backup',
      'x-svc-served-model': 'cheap',
      'x-svc-original-model': 'smart',
      'x-svc-fallback': 'true',
      'x-svc-fallback-reason': 'upstream_5xx',
    });
    const e = gw.sink.events.at(-1);
    expect(e).toMatchObject({ requestedModel: 'smart', servedModel: 'cheap', upstream: 'backup', fallback: true, fallbackReason: 'upstream_5xx', status: 200 });
  });
});

describe('when every upstream fails', () => {
  it('answers 502 on connection errors', async () => {
    const err = await call('dead').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    const e = err as InstanceType<typeof OpenAI.APIError>;
    expect(e.status).toBe(502);
    expect(e.headers?.get('x-svc-upstream')).toBe('nowhere');
    expect(e.headers?.get('x-svc-fallback')).toBe('false');
    expect(gw.sink.events.at(-1)).toMatchObject({ status: 502, errorCode: 'upstream_error', upstream: 'nowhere' });
  });

  it('answers 504 when the upstream stalls before headers, and 504 when a stream stalls before its first chunk', async () => {
    primary.fallback = () => ({ kind: 'stall' });
    expect(await call('slow').catch((e: { status?: number }) => e.status)).toBe(504);
    primary.fallback = () => ({ kind: 'stall-after-headers' });
    expect(await call('slow', true).catch((e: { status?: number }) => e.status)).toBe(504);
  });

  it('answers 503 with retry-after when every upstream is rate limited', async () => {
    primary.fallback = () => ({ kind: 'status', status: 429, retryAfter: '7' });
    const e = (await call('busy').catch((x: unknown) => x)) as InstanceType<typeof OpenAI.APIError>;
    expect(e.status).toBe(503);
    expect(e.headers?.get('retry-after')).toBe('7');
  });

  it('passes a 400 of the upstream through without trying another target', async () => {
    primary.fallback = () => ({ kind: 'status', status: 400, body: { error: { message: 'bad temperature' } } });
    const e = (await call('smart').catch((x: unknown) => x)) as InstanceType<typeof OpenAI.APIError>;
    expect(e.status).toBe(400);
    expect(e.message).toContain('bad temperature');
    expect(secondary.calls).toHaveLength(0);
  });
});

describe('after the first byte', () => {
  it.each([
    ['a cut connection', { kind: 'cut', afterChunks: 3 } as const],
    ['a stall between chunks', { kind: 'stall-mid', afterChunks: 3 } as const],
  ])('ends the stream with an explicit error event on %s, never a clean end', async (_name, behavior) => {
    primary.fallback = () => behavior;
    const stream = await client.chat.completions.create({ model: 'smart', messages: [{ role: 'user', content: 'hi' }], stream: true });
    let text = '';
    const err = await (async () => {
      for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(String((err as Error).message)).toMatch(/stream/i);
    expect(text.length).toBeGreaterThan(0);
    expect(secondary.calls).toHaveLength(0); // too late to fall back: the client already has bytes
    expect(gw.sink.events.at(-1)).toMatchObject({ status: 502, errorCode: 'upstream_stream_error' });
    expect(gw.sink.events.at(-1)?.outputTokens).toBeGreaterThan(0);
  });
});

describe('client disconnect', () => {
  it('cancels the upstream request', async () => {
    primary.fallback = () => ({ kind: 'reply', chunkDelayMs: 100, content: 'a b c d e f g h i j k l m n o p' });
    const ctrl = new AbortController();
    const stream = await client.chat.completions.create({ model: 'smart', messages: [{ role: 'user', content: 'hi' }], stream: true }, { signal: ctrl.signal });
    const it2 = stream[Symbol.asyncIterator]();
    await it2.next();
    ctrl.abort();
    await eventually(() => primary.calls.at(-1)?.aborted === true);
    await eventually(() => gw.sink.events.at(-1)?.errorCode === 'client_closed');
    expect(gw.sink.events.at(-1)).toMatchObject({ status: 499 });
  });
});
