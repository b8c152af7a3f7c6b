// OpenAI's moderation endpoint as a guardrail check, through the gateway with the official SDKs as callers. The fake
// speaks the moderation wire format, checked first by the openai SDK's own moderations.create. Covered: a flagged
// prompt blocked before admission (nothing charged, no upstream call), a category the check does not list passing,
// a flagged answer blocked, the API key read from a Secret, the service down failing closed and open, and the price.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeModeration } from '../fakes/guard-services/openai-moderation.ts';
import type { JsonFake } from '../fakes/guard-services/json-server.ts';
import { startFakeUpstream, type FakeUpstream } from '../fakes/upstream.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { basics, route, secret } from '../helpers/manifests.ts';
import { expectBlockRecorded, guardrail, guardrailCostOfChars, userCalls } from './cloud-helpers.ts';

const MOD_KEY = 'sk-proj-moderation-key-0123456789';
const PRICE = { perCallUsd: 0.0005, per1kCharactersUsd: 0 };
let up: FakeUpstream;
let mod: JsonFake;
let gw: TestGateway;
let openai: OpenAI;

beforeAll(async () => {
  up = await startFakeUpstream();
  mod = await startFakeModeration(MOD_KEY);
  const b = basics();
  const openaiModeration = { baseUrl: `${mod.url}/v1`, credentials: { secretKeyRef: { name: 'openai-mod', key: 'api-key' } } };
  const timeoutMs = 30_000; // generous: a loaded machine must not turn an answer into a timeout
  gw = await startGateway([
    ...b.docs,
    secret('openai-mod', { 'api-key': MOD_KEY }),
    route('gpt-mod', [{ name: 'oa', provider: 'openai', baseUrl: up.baseUrl }]),
    route('gpt-violence-only', [{ name: 'oa', provider: 'openai', baseUrl: up.baseUrl }]),
    route('gpt-down-open', [{ name: 'oa', provider: 'openai', baseUrl: up.baseUrl }]),
    route('gpt-down-closed', [{ name: 'oa', provider: 'openai', baseUrl: up.baseUrl }]),
    guardrail('moderation', ['gpt-mod'], [{ action: 'block', openaiModeration, timeoutMs, pricing: PRICE }]),
    guardrail('violence', ['gpt-violence-only'], [{ action: 'block', openaiModeration: { ...openaiModeration, categories: ['violence'] }, timeoutMs }]),
    guardrail(
      'mod-down-open',
      ['gpt-down-open'],
      [{ action: 'block', openaiModeration: { ...openaiModeration, baseUrl: 'http://127.0.0.1:9/v1' }, failure: 'open' }],
    ),
    guardrail(
      'mod-down-closed',
      ['gpt-down-closed'],
      [{ action: 'block', openaiModeration: { ...openaiModeration, baseUrl: 'http://127.0.0.1:9/v1' }, timeoutMs }],
    ),
  ]);
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: b.keys.builder, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await up?.close();
  await mod?.close();
});

const ask = (model: string, content: string) => openai.chat.completions.create({ model, messages: [{ role: 'user', content }] });

describe('the fake speaks the moderation wire format', () => {
  it("is accepted by the openai SDK's moderations.create", async () => {
    const client = new OpenAI({ baseURL: `${mod.url}/v1`, apiKey: MOD_KEY, maxRetries: 0 });
    const r = await client.moderations.create({ model: 'omni-moderation-latest', input: ['I will kill the process', 'hello'] });
    expect(r.results.map((x) => x.flagged)).toEqual([true, false]);
    expect(r.results[0]!.categories.violence).toBe(true);
    const bad = new OpenAI({ baseURL: `${mod.url}/v1`, apiKey: 'wrong', maxRetries: 0 });
    await expect(bad.moderations.create({ input: 'x' })).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
  });
});

describe('openaiModeration checks', () => {
  it('passes a clean prompt and answer, sending the model and the key from the Secret, and charges one call per stage', async () => {
    const calls = mod.calls.length;
    up.enqueue({ kind: 'reply', content: 'Sure.' });
    const r = await ask('gpt-mod', 'Plan a picnic');
    expect(r.choices[0]!.message.content).toBe('Sure.');
    const sent = mod.calls.slice(calls);
    expect(sent.map((c) => c.body)).toEqual([
      { model: 'omni-moderation-latest', input: ['Plan a picnic'] },
      { model: 'omni-moderation-latest', input: ['Sure.'] },
    ]);
    const e = gw.sink.events.at(-1)!;
    expect(e.guardrailCostNano).toBe(guardrailCostOfChars(PRICE, [13, 5]));
  });

  it('blocks a flagged prompt before admission, naming the categories, never the text', async () => {
    const before = userCalls(up).length;
    const events = gw.sink.events.length;
    const err = await ask('gpt-mod', 'I want to hurt myself').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as Error).message).toContain('guardrail moderation (check openai-moderation: self-harm, self-harm/intent found)');
    expect((err as Error).message).not.toContain('hurt myself');
    expect(userCalls(up).length).toBe(before);
    expectBlockRecorded(gw.sink.events, events);
  });

  it('blocks only the listed categories when the check names some', async () => {
    up.enqueue({ kind: 'reply', content: 'ok' });
    await expect(ask('gpt-violence-only', 'I want to hurt myself')).resolves.toBeTruthy();
    await expect(ask('gpt-violence-only', 'kill it with fire')).rejects.toBeInstanceOf(OpenAI.BadRequestError);
  });

  it('blocks a flagged answer', async () => {
    up.enqueue({ kind: 'reply', content: 'You should kill them.' });
    const err = await ask('gpt-mod', 'advice?').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as Error).message).toContain('The answer was blocked by guardrail moderation');
    expect(gw.sink.events.at(-1)!.guardrails).toContainEqual({
      guardrail: 'moderation',
      check: 'openai-moderation',
      action: 'block',
      stage: 'response',
      kind: 'violence',
      count: 1,
    });
  });

  it('with the service down fails closed (refused) or open (passed, recorded)', async () => {
    const err = await ask('gpt-down-closed', 'hello').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as Error).message).toContain('guardrail mod-down-closed is unavailable (check openai-moderation: unavailable)');
    up.enqueue({ kind: 'reply', content: 'hi' });
    await ask('gpt-down-open', 'hello');
    const e = gw.sink.events.at(-1)!;
    expect(e.guardrails).toContainEqual({
      guardrail: 'mod-down-open',
      check: 'openai-moderation',
      action: 'log',
      stage: 'request',
      kind: 'unavailable',
      count: 1,
    });
    expect(e.guardrailCostNano).toBe(0);
  });
});
