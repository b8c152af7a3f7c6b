// Key expiry through the official SDKs (README: Keys, expiry and rotation): 401 key_expired from the second the key
// expires, x-svc-key-expires-in within 7 days of it, /v1/me's expires_at and created_at, a stream that outlives the
// key completes, and an expiry moved into the past stops the key at once. In-process gateway on the memory store,
// whose clock (the process clock) the test steps.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compile } from '../../gateway/contract/compile.ts';
import { formatIssue, parseManifests } from '../../gateway/config/manifests.ts';
import { build } from '../../gateway/server.ts';
import { MemoryStore } from '../../gateway/state/memory-store.ts';
import { MemoryUsageSink } from '../../gateway/usage/event.ts';
import { startFakeUpstream, type FakeUpstream } from '../fakes/upstream.ts';
import { account, apiKey, plan, route } from '../helpers/manifests.ts';

const PEPPER = 'expiry-test-pepper';
const CREATED = '2026-11-01T08:00:00Z';
const EXPIRES = '2026-11-20T12:00:00Z';
const EXP = Date.parse(EXPIRES);
const DAY = 86_400_000;

let clock = EXP - 30 * DAY;
let up: FakeUpstream;
let url: string;
let close: () => Promise<void>;
let sink: MemoryUsageSink;
let store: MemoryStore;
let keyOf: (name: string) => string;
let docsWith: (expiresAt: string) => object[];

beforeAll(async () => {
  up = await startFakeUpstream();
  const keys = { short: apiKey('short', 'acme', { expiresAt: EXPIRES }), forever: apiKey('forever', 'acme') };
  // As the API server gives them: with a creation time.
  for (const k of Object.values(keys)) (k.docs[0] as { metadata: Record<string, string> }).metadata.creationTimestamp = CREATED;
  keyOf = (name) => keys[name as keyof typeof keys].key;
  docsWith = (expiresAt) => [
    plan('builder', { tier: 2, anthropicEndpoint: true }),
    account('acme', 'builder', { credits: [{ id: 'c1', amountUsd: 100 }] }),
    ...keys.short.docs.map((d) => ((d as { kind: string }).kind === 'ApiKey' ? { ...d, spec: { ...(d as { spec: object }).spec, expiresAt } } : d)),
    ...keys.forever.docs,
    route('gpt-test', [{ name: 'fake-a', provider: 'openai', baseUrl: up.baseUrl, upstreamModel: 'upstream-gpt' }]),
  ];
  sink = new MemoryUsageSink();
  store = new MemoryStore(sink, { now: () => clock });
  await apply(EXPIRES);
  const compiled = compiled_(EXPIRES);
  const { app } = await build({ config: { current: () => compiled.snapshot }, store, pepper: PEPPER, logLevel: 'silent', now: () => clock });
  url = await app.listen({ port: 0, host: '127.0.0.1' });
  close = () => app.close();
});

afterAll(async () => {
  await close?.();
  await up?.close();
});

function compiled_(expiresAt: string): ReturnType<typeof compile> {
  const parsed = parseManifests(docsWith(expiresAt).map((doc, i) => ({ source: `t#${i}`, doc })));
  if (parsed.errors.length > 0) throw new Error(parsed.errors.map(formatIssue).join('\n'));
  return compile(parsed.set, { pepper: PEPPER });
}

/** What a new config does (standalone reload, the operator's publish): the key records replaced. */
async function apply(expiresAt: string): Promise<void> {
  const r = compiled_(expiresAt);
  await store.applyConfig(r.snapshot, r.keys);
}

function openai(key = keyOf('short')): OpenAI {
  return new OpenAI({ baseURL: `${url}/v1`, apiKey: key, maxRetries: 0 });
}

const hi = { model: 'gpt-test', messages: [{ role: 'user' as const, content: 'Hi' }] };

async function refusal(p: Promise<unknown>): Promise<{ status: number | undefined; code: unknown; message: string }> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(err instanceof OpenAI.APIError)) throw new Error(`expected an API error, got ${String(err)}`);
  return { status: err.status, code: err.code, message: err.message };
}

describe('key expiry', () => {
  it('says nothing more than 7 days before; from 7 days on every answer carries x-svc-key-expires-in (seconds)', async () => {
    clock = EXP - 7 * DAY - 1000;
    const far = await openai().chat.completions.create(hi).withResponse();
    expect(far.response.headers.get('x-svc-key-expires-in')).toBeNull();
    clock = EXP - 7 * DAY;
    const near = await openai().chat.completions.create(hi).withResponse();
    expect(near.response.headers.get('x-svc-key-expires-in')).toBe(String(7 * 86_400));
    // CLIs in a browser can read it.
    expect(near.response.headers.get('access-control-expose-headers')).toContain('x-svc-key-expires-in');
    const forever = await openai(keyOf('forever')).chat.completions.create(hi).withResponse();
    expect(forever.response.headers.get('x-svc-key-expires-in')).toBeNull();
  });

  it('/v1/me gives expires_at and created_at (null when the key never expires)', async () => {
    clock = EXP - 2 * DAY;
    const res = await fetch(`${url}/v1/me`, { headers: { authorization: `Bearer ${keyOf('short')}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-svc-key-expires-in')).toBe(String(2 * 86_400));
    expect(await res.json()).toMatchObject({ key: { name: 'short', state: 'active' }, expires_at: EXPIRES, created_at: CREATED });
    const forever = await fetch(`${url}/v1/me`, { headers: { authorization: `Bearer ${keyOf('forever')}` } });
    expect(await forever.json()).toMatchObject({ expires_at: null, created_at: CREATED });
  });

  it('works 1 ms before the expiry second and answers 401 key_expired from it, in both dialects; quota untouched', async () => {
    clock = EXP - 1;
    const last = await openai().chat.completions.create(hi).withResponse();
    expect(last.response.headers.get('x-svc-key-expires-in')).toBe('0');
    clock = EXP;
    const upstreamCalls = up.calls.length;
    const r = await refusal(openai().chat.completions.create(hi));
    expect(r).toMatchObject({ status: 401, code: 'key_expired' });
    expect(r.message).toContain('rotate');
    expect(up.calls.length).toBe(upstreamCalls);
    expect(sink.events.at(-1)).toMatchObject({ status: 401, errorCode: 'key_expired', costNano: 0 });
    const me = await fetch(`${url}/v1/me`, { headers: { authorization: `Bearer ${keyOf('short')}` } });
    expect(me.status).toBe(401);
    expect(await me.json()).toMatchObject({ error: { code: 'key_expired', type: 'authentication_error' } });
    const anthropic = new Anthropic({ baseURL: `${url}/anthropic`, apiKey: keyOf('short'), maxRetries: 0 });
    const err = await anthropic.messages.create({ model: 'gpt-test', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.AuthenticationError);
    expect((err as InstanceType<typeof Anthropic.AuthenticationError>).error).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    // A key without expiry is untouched.
    await openai(keyOf('forever')).chat.completions.create(hi);
  });

  it('a clock stepped back makes the key work again on this process (the memory store has one clock: its own)', async () => {
    clock = EXP - 60_000;
    await openai().chat.completions.create(hi);
  });

  it('completes a stream that was admitted before the expiry, and refuses the next call', async () => {
    clock = EXP - 1000;
    up.enqueue({ kind: 'reply', content: 'one two three four five', chunkDelayMs: 20 });
    const { data: stream, response } = await openai()
      .chat.completions.create({ ...hi, stream: true })
      .withResponse();
    expect(response.headers.get('x-svc-key-expires-in')).toBe('1'); // a stream's headers carry it too
    let text = '';
    let chunks = 0;
    for await (const c of stream) {
      text += c.choices[0]?.delta.content ?? '';
      if (++chunks === 1) clock = EXP + 5000; // the key expires mid-stream
    }
    expect(text).toBe('one two three four five');
    const streamed = sink.events.filter((e) => e.stream).at(-1);
    expect(streamed).toMatchObject({ status: 200, errorCode: null });
    expect(streamed?.costNano).toBeGreaterThan(0);
    expect(await refusal(openai().chat.completions.create(hi))).toMatchObject({ status: 401, code: 'key_expired' });
  });

  it('writes the latest expiresAt, 9999-12-31T23:59:59Z, as RFC 3339; refuses one whose offset carries it out of years 0000-9999, naming the field', async () => {
    clock = EXP - 2 * DAY;
    const last = '9999-12-31T23:59:59Z';
    await apply(last);
    const res = await fetch(`${url}/v1/me`, { headers: { authorization: `Bearer ${keyOf('short')}` } });
    expect(await res.json()).toMatchObject({ expires_at: last });
    for (const value of ['9999-12-31T23:59:59-23:59', '9999-12-31T23:59:59-00:01', '0000-01-01T00:00:00+00:01']) {
      const parsed = parseManifests(docsWith(value).map((doc, i) => ({ source: `t#${i}`, doc })));
      expect(parsed.errors.map(formatIssue), value).toEqual([
        expect.stringMatching(
          /^t#\d+: ApiKey\/short field spec\.expiresAt: must lie between 0000-01-01T00:00:00Z and 9999-12-31T23:59:59Z once its offset is applied/,
        ),
      ]);
    }
    await apply(EXPIRES);
  });

  it('stops the key at once when an update moves its expiry into the past (its record still cached), and a later expiry revives it', async () => {
    clock = EXP - 3 * DAY;
    await openai().chat.completions.create(hi); // the key's record is now in the key cache
    await apply(new Date(clock - 1000).toISOString());
    expect(await refusal(openai().chat.completions.create(hi))).toMatchObject({ status: 401, code: 'key_expired' });
    await apply(EXPIRES);
    await openai().chat.completions.create(hi);
  });
});
