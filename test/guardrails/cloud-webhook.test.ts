// The webhook guardrail check through the gateway, with the official SDKs as callers: the team's service sees the
// documented JSON contract (names, never the key), and its allow / block / mask answers are obeyed on requests and
// answers, streamed or not; a service that stalls, answers 500 or answers something other than JSON fails closed
// (refused, the guardrail named unavailable) or open (passed, recorded); a passed call is charged the check's price
// as its own line of the usage event, a blocked one costs nothing.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../fakes/upstream.ts';
import { startJsonFake, type JsonFake, type ServiceCall } from '../fakes/guard-services/json-server.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { basics, route, secret } from '../helpers/manifests.ts';
import { until } from '../helpers/until.ts';
import { expectBlockRecorded, guardrail, guardrailCost, userCalls } from './cloud-helpers.ts';

const TOKEN = 'whk-token-0123456789abcdef';
let up: FakeUpstream;
let hook: JsonFake;
let gw: TestGateway;
let openai: OpenAI;
let anthropic: Anthropic;
let key: string;

/** The team's service: blocks "forbidden", masks "Falcon-7", passes the rest. */
function judge(call: ServiceCall): { json: unknown } {
  const texts = (call.body.texts as Array<{ index: number; text: string }>) ?? [];
  if (texts.some((t) => t.text.includes('forbidden'))) return { json: { action: 'block', reason: 'policy', categories: ['Internal Policy'] } };
  const masks = texts.flatMap((t) => {
    const at = t.text.indexOf('Falcon-7');
    return at < 0 ? [] : [{ index: t.index, start: at, end: at + 'Falcon-7'.length, replacement: '[PROJECT]' }];
  });
  return { json: masks.length > 0 ? { action: 'mask', categories: ['codename'], replacements: masks } : { action: 'allow' } };
}

const PRICE = { perCallUsd: 0.001, per1kCharactersUsd: 0.002 };

beforeAll(async () => {
  up = await startFakeUpstream();
  hook = await startJsonFake(judge);
  const b = basics();
  key = b.keys.builder;
  const webhook = { url: `${hook.url}/check`, credentials: { secretKeyRef: { name: 'hook-token', key: 'token' } } };
  gw = await startGateway([
    ...b.docs,
    secret('hook-token', { token: TOKEN }),
    route('gpt-closed', [{ name: 'oa', provider: 'openai', baseUrl: up.baseUrl }]),
    route('gpt-open', [{ name: 'oa', provider: 'openai', baseUrl: up.baseUrl }]),
    route('claude-closed', [{ name: 'oa', provider: 'openai', baseUrl: up.baseUrl }]),
    route('gpt-stall-closed', [{ name: 'oa', provider: 'openai', baseUrl: up.baseUrl }]),
    route('gpt-stall-open', [{ name: 'oa', provider: 'openai', baseUrl: up.baseUrl }]),
    // Generous timeouts where the service answers (a loaded machine must not turn an answer into a timeout); short ones
    // only where it stalls, on the request alone.
    guardrail(
      'team-closed',
      ['gpt-closed', 'claude-closed'],
      [{ name: 'policy', action: 'block', webhook, timeoutMs: 30_000, failure: 'closed', pricing: PRICE }],
    ),
    guardrail('team-open', ['gpt-open'], [{ name: 'policy', action: 'block', webhook, timeoutMs: 30_000, failure: 'open', pricing: PRICE }]),
    guardrail('stall-closed', ['gpt-stall-closed'], [{ name: 'policy', action: 'block', webhook, timeoutMs: 200, failure: 'closed', pricing: PRICE }], {
      stages: ['request'],
    }),
    guardrail('stall-open', ['gpt-stall-open'], [{ name: 'policy', action: 'block', webhook, timeoutMs: 200, failure: 'open', pricing: PRICE }], {
      stages: ['request'],
    }),
  ]);
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: `${gw.url}/anthropic`, apiKey: key, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await up?.close();
  await hook?.close();
});

const lastEvent = () => gw.sink.events.at(-1)!;

/**
 * An answer the service refused settles as a local answer block does: one event, 400 content_blocked naming the
 * guardrail and check; charged what the upstream produced (the route's price: 1,040 and 2,080 nano-USD a token) plus
 * the price of the checks that answered (the request's and the answer's).
 */
async function expectAnswerBlockSettled(events: number, calls: number): Promise<void> {
  await until(() => gw.sink.events.length === events + 1);
  const e = lastEvent();
  expect(e).toMatchObject({ status: 400, errorCode: 'content_blocked' });
  expect(e.guardrails).toContainEqual({ guardrail: 'team-closed', check: 'policy', action: 'block', stage: 'response', kind: 'internal-policy', count: 1 });
  expect(e.outputTokens).toBeGreaterThan(0);
  const sent = hook.calls.slice(calls);
  expect(sent.map((c) => c.body.stage)).toEqual(['request', 'response']);
  expect(e.guardrailCostNano).toBe(guardrailCost(PRICE, sent));
  expect(e.costNano).toBe(e.inputTokens * 1040 + e.outputTokens * 2080 + e.guardrailCostNano!);
}
const ask = (model: string, content: string) => openai.chat.completions.create({ model, messages: [{ role: 'user', content }] });

describe('the webhook contract', () => {
  it('passes a clean call, sends names (never the key) with each text and its place, and charges the price as its own line', async () => {
    const calls = hook.calls.length;
    up.enqueue({ kind: 'reply', content: 'All good here.' });
    const r = await ask('gpt-closed', 'Summarise the quarterly plan.');
    expect(r.choices[0]!.message.content).toBe('All good here.');
    const sent = hook.calls.slice(calls);
    expect(sent.map((c) => c.body.stage)).toEqual(['request', 'response']);
    expect(sent[0]!.body).toMatchObject({
      guardrail: 'team-closed',
      check: 'policy',
      endpoint: 'chat.completions',
      dialect: 'openai',
      model: 'gpt-closed',
      account: 'acme',
      apiKey: 'builder-key',
      texts: [{ index: 0, path: 'messages[0].content', text: 'Summarise the quarterly plan.' }],
    });
    expect(sent[0]!.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(JSON.stringify(sent.map((c) => c.body))).not.toContain(key);
    const e = lastEvent();
    expect(e.guardrailCostNano).toBe(guardrailCost(PRICE, sent));
    expect(e.guardrailCostNano).toBeGreaterThan(0);
    expect(e.costNano).toBeGreaterThanOrEqual(e.guardrailCostNano!);
  });

  it('blocks a request the service refuses: 400 content_blocked naming the guardrail, no upstream call, nothing charged, the block recorded', async () => {
    const before = userCalls(up).length;
    const events = gw.sink.events.length;
    const err = await ask('gpt-closed', 'this is forbidden text').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    const e = err as InstanceType<typeof OpenAI.BadRequestError>;
    expect((e.error as { code?: string }).code).toBe('content_blocked');
    expect(e.message).toContain('guardrail team-closed');
    expect(e.message).toContain('internal-policy');
    expect(e.message).not.toContain('forbidden text');
    expect(userCalls(up).length).toBe(before);
    expectBlockRecorded(gw.sink.events, events);
    const m = await gw.metrics.registry.getSingleMetricAsString('svc_gateway_guardrail_matches_total');
    expect(m).toMatch(/guardrail="team-closed",check="policy",action="block",stage="request",kind="internal-policy"\} 1/);
  });

  it('blocks in the Anthropic dialect too', async () => {
    const err = await anthropic.messages
      .create({ model: 'claude-closed', max_tokens: 20, messages: [{ role: 'user', content: 'forbidden words' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect((err as Error).message).toContain('guardrail team-closed');
  });

  it('masks what the service replaces before the upstream sees it, and records the fact', async () => {
    up.enqueue({ kind: 'reply', content: 'Noted.' });
    await ask('gpt-closed', 'Status of Falcon-7 please');
    const sent = JSON.stringify(userCalls(up).at(-1)!.body);
    expect(sent).toContain('Status of [PROJECT] please');
    expect(sent).not.toContain('Falcon-7');
    expect(lastEvent().guardrails).toContainEqual({ guardrail: 'team-closed', check: 'policy', action: 'mask', stage: 'request', kind: 'codename', count: 1 });
  });

  it('blocks an answer the service refuses (not streamed), settled as content_blocked', async () => {
    const [events, calls] = [gw.sink.events.length, hook.calls.length];
    up.enqueue({ kind: 'reply', content: 'Here is the forbidden answer.' });
    const err = await ask('gpt-closed', 'tell me').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as Error).message).toContain('The answer was blocked by guardrail team-closed');
    expect((err as Error).message).not.toContain('forbidden answer');
    await expectAnswerBlockSettled(events, calls);
  });

  it('checks a streamed answer at its end: a pass ends cleanly, a block ends the stream with an error event', async () => {
    up.enqueue({ kind: 'reply', content: 'one two three' });
    const ok = await openai.chat.completions.create({ model: 'gpt-closed', stream: true, messages: [{ role: 'user', content: 'count' }] });
    let text = '';
    let finish: string | null = null;
    for await (const c of ok) {
      text += c.choices[0]?.delta?.content ?? '';
      finish = c.choices[0]?.finish_reason ?? finish;
    }
    expect(text).toBe('one two three');
    expect(finish).toBe('stop');
    expect(hook.calls.at(-1)!.body.texts).toEqual([{ index: 0, path: 'stream', text: 'one two three' }]);

    const [events, calls] = [gw.sink.events.length, hook.calls.length];
    up.enqueue({ kind: 'reply', content: 'a forbidden thing' });
    const bad = await openai.chat.completions.create({ model: 'gpt-closed', stream: true, messages: [{ role: 'user', content: 'again' }] });
    let sawStop = false;
    const err = await (async () => {
      for await (const c of bad) if (c.choices[0]?.finish_reason) sawStop = true;
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toContain('guardrail team-closed');
    expect(sawStop).toBe(false);
    await expectAnswerBlockSettled(events, calls);
  });
});

describe('other dialects', () => {
  it('checks an Anthropic streamed answer at its end: a pass ends with message_stop, a block with an error event', async () => {
    up.enqueue({ kind: 'reply', content: 'calm words' });
    const ok = anthropic.messages.stream({ model: 'claude-closed', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] });
    const msg = await ok.finalMessage();
    expect(msg.content[0]?.type === 'text' ? msg.content[0].text : null).toBe('calm words');
    expect(msg.stop_reason).toBe('end_turn');
    const [events, calls] = [gw.sink.events.length, hook.calls.length];
    up.enqueue({ kind: 'reply', content: 'a forbidden reply' });
    const bad = anthropic.messages.stream({ model: 'claude-closed', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] });
    const err = await bad.finalMessage().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toContain('guardrail team-closed');
    await expectAnswerBlockSettled(events, calls);
  });

  it('checks a Responses call on its input and output', async () => {
    const calls = hook.calls.length;
    up.enqueue({ kind: 'reply', content: 'Responses answer.' });
    const r = await openai.responses.create({ model: 'gpt-closed', input: 'A Responses prompt' });
    expect(r.output_text).toBe('Responses answer.');
    const sent = hook.calls.slice(calls);
    expect(sent.map((c) => [c.body.endpoint, c.body.stage])).toEqual([
      ['responses', 'request'],
      ['responses', 'response'],
    ]);
    await expect(openai.responses.create({ model: 'gpt-closed', input: 'forbidden input' })).rejects.toBeInstanceOf(OpenAI.BadRequestError);
  });
});

describe('failure modes', () => {
  it('fails closed on a stall past timeoutMs: refused, the guardrail named unavailable, nothing charged', async () => {
    hook.enqueue({ hang: true });
    const events = gw.sink.events.length;
    const err = await ask('gpt-stall-closed', 'hello there').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as Error).message).toContain('guardrail stall-closed is unavailable (check policy: timeout)');
    expectBlockRecorded(gw.sink.events, events);
  });

  it('fails open on a stall: the call passes and the failure is a fact; the failed check is not charged', async () => {
    hook.enqueue({ hang: true });
    up.enqueue({ kind: 'reply', content: 'fine' });
    const r = await ask('gpt-stall-open', 'hello there');
    expect(r.choices[0]!.message.content).toBe('fine');
    const e = lastEvent();
    expect(e.guardrails).toEqual([{ guardrail: 'stall-open', check: 'policy', action: 'log', stage: 'request', kind: 'unavailable', count: 1 }]);
    expect(e.guardrailCostNano).toBe(0);
  });

  it.each([
    ['a 500', { status: 500, raw: 'internal error' }],
    ['a non-JSON answer', { status: 200, raw: '<html>oops</html>', contentType: 'text/html' }],
    ['JSON without an action', { json: { ok: true } }],
  ] as const)('treats %s as a failure: closed refuses, open passes', async (_, answer) => {
    hook.enqueue(answer);
    const err = await ask('gpt-closed', 'hello').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as Error).message).toContain('is unavailable');
    expect((err as Error).message).not.toContain('oops');
    hook.enqueue(answer);
    up.enqueue({ kind: 'reply', content: 'passed' });
    const r = await ask('gpt-open', 'hello');
    expect(r.choices[0]!.message.content).toBe('passed');
  });
});
