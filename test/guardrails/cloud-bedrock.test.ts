// AWS Bedrock Guardrails' ApplyGuardrail as a guardrail check, through the gateway with the official SDKs as
// callers, signed with SigV4 by the identity code the Bedrock provider uses (static keys from a whole Secret here).
// The fake speaks the ApplyGuardrail wire format and checks the signature; @aws-sdk/client-bedrock-runtime's
// ApplyGuardrailCommand is run against it first. Covered: a denied topic blocked (request and answer), anonymized
// PII masked with the guardrail's outputs, a pass, a wrong key and a stall failing closed and open, the price.
import { ApplyGuardrailCommand, BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import Anthropic from '@anthropic-ai/sdk';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BLOCKED_MESSAGE, startFakeBedrockGuardrails } from '../fakes/guard-services/bedrock-guardrails.ts';
import type { JsonFake } from '../fakes/guard-services/json-server.ts';
import { startFakeUpstream, type FakeUpstream } from '../fakes/upstream.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { basics, route, secret } from '../helpers/manifests.ts';
import { expectBlockRecorded, guardrail, guardrailCostOfChars, userCalls } from './cloud-helpers.ts';

const KEYS = { AWS_ACCESS_KEY_ID: 'AKIAFAKEGUARDRAIL001', AWS_SECRET_ACCESS_KEY: 'fake-guardrail-secret-0123456789' };
const GUARDRAIL = { id: 'gr-abc123xyz', version: '3' };
const PRICE = { perCallUsd: 0, per1kCharactersUsd: 0.15 };
let up: FakeUpstream;
let bg: JsonFake;
let gw: TestGateway;
let openai: OpenAI;
let anthropic: Anthropic;

beforeAll(async () => {
  up = await startFakeUpstream();
  bg = await startFakeBedrockGuardrails({
    guardrailId: GUARDRAIL.id,
    version: GUARDRAIL.version,
    keys: [{ accessKeyId: KEYS.AWS_ACCESS_KEY_ID, secretAccessKey: KEYS.AWS_SECRET_ACCESS_KEY }],
  });
  const b = basics();
  const bedrock = {
    guardrailIdentifier: GUARDRAIL.id,
    guardrailVersion: GUARDRAIL.version,
    region: 'us-east-1',
    baseUrl: bg.url,
    credentials: { secretKeyRef: { name: 'aws-guard' } },
  };
  gw = await startGateway([
    ...b.docs,
    secret('aws-guard', KEYS),
    secret('aws-wrong', { AWS_ACCESS_KEY_ID: KEYS.AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY: 'not-the-secret' }),
    route('gpt-bedrock', [{ name: 'oa', provider: 'openai', baseUrl: up.baseUrl }]),
    route('claude-bedrock', [{ name: 'oa', provider: 'openai', baseUrl: up.baseUrl }]),
    route('gpt-wrong-key', [{ name: 'oa', provider: 'openai', baseUrl: up.baseUrl }]),
    route('gpt-slow', [{ name: 'oa', provider: 'openai', baseUrl: up.baseUrl }]),
    guardrail('aws', ['gpt-bedrock', 'claude-bedrock'], [{ action: 'block', bedrock, timeoutMs: 30_000, pricing: PRICE }]),
    guardrail(
      'aws-wrong',
      ['gpt-wrong-key'],
      [{ action: 'block', bedrock: { ...bedrock, credentials: { secretKeyRef: { name: 'aws-wrong' } } }, timeoutMs: 30_000 }],
    ),
    guardrail('aws-slow', ['gpt-slow'], [{ action: 'block', bedrock, timeoutMs: 200, failure: 'open' }], { stages: ['request'] }),
  ]);
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: b.keys.builder, maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: `${gw.url}/anthropic`, apiKey: b.keys.builder, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await up?.close();
  await bg?.close();
});

const ask = (model: string, content: string) => openai.chat.completions.create({ model, messages: [{ role: 'user', content }] });

describe('the fake speaks ApplyGuardrail', () => {
  it("is accepted by the AWS SDK's ApplyGuardrailCommand (SigV4-signed), and refuses a wrong secret", async () => {
    const client = new BedrockRuntimeClient({
      region: 'us-east-1',
      endpoint: bg.url,
      credentials: { accessKeyId: KEYS.AWS_ACCESS_KEY_ID, secretAccessKey: KEYS.AWS_SECRET_ACCESS_KEY },
      // HTTP/1.1, as the gateway calls it (the SDK's default handler speaks HTTP/2 for its bidirectional streams).
      requestHandler: new NodeHttpHandler(),
      maxAttempts: 1,
    });
    const cmd = (text: string) =>
      new ApplyGuardrailCommand({ guardrailIdentifier: GUARDRAIL.id, guardrailVersion: GUARDRAIL.version, source: 'INPUT', content: [{ text: { text } }] });
    const blocked = await client.send(cmd('Should I invest in stocks?'));
    expect(blocked.action).toBe('GUARDRAIL_INTERVENED');
    expect(blocked.outputs?.[0]?.text).toBe(BLOCKED_MESSAGE);
    expect(blocked.assessments?.[0]?.topicPolicy?.topics?.[0]?.action).toBe('BLOCKED');
    const masked = await client.send(cmd('mail bob@example.com'));
    expect(masked.outputs?.[0]?.text).toBe('mail {EMAIL}');
    expect((await client.send(cmd('hello'))).action).toBe('NONE');
    const wrong = new BedrockRuntimeClient({
      region: 'us-east-1',
      endpoint: bg.url,
      credentials: { accessKeyId: KEYS.AWS_ACCESS_KEY_ID, secretAccessKey: 'nope' },
      requestHandler: new NodeHttpHandler(),
      maxAttempts: 1,
    });
    await expect(wrong.send(cmd('hello'))).rejects.toThrow(/signature/);
  });
});

describe('bedrock checks', () => {
  it('passes a clean call, signed, with source INPUT then OUTPUT, and charges the price per 1,000 characters', async () => {
    const calls = bg.calls.length;
    up.enqueue({ kind: 'reply', content: 'A fine day.' });
    const r = await ask('gpt-bedrock', 'How is the weather?');
    expect(r.choices[0]!.message.content).toBe('A fine day.');
    const sent = bg.calls.slice(calls);
    expect(sent.map((c) => c.body.source)).toEqual(['INPUT', 'OUTPUT']);
    expect(sent[0]!.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIAFAKEGUARDRAIL001\//);
    expect(gw.sink.events.at(-1)!.guardrailCostNano).toBe(guardrailCostOfChars(PRICE, [19, 11]));
  });

  it('blocks a denied topic before admission: content_blocked names the guardrail and the topic, nothing charged', async () => {
    const before = userCalls(up).length;
    const events = gw.sink.events.length;
    const err = await ask('gpt-bedrock', 'Should I invest my savings?').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as Error).message).toContain('guardrail aws (check bedrock: topic:investment found)');
    expect(userCalls(up).length).toBe(before);
    expectBlockRecorded(gw.sink.events, events);
  });

  it('blocks in the Anthropic dialect, and blocks an answer', async () => {
    const err = await anthropic.messages
      .create({ model: 'claude-bedrock', max_tokens: 20, messages: [{ role: 'user', content: 'invest tips' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    up.enqueue({ kind: 'reply', content: 'You should invest everything.' });
    const err2 = await ask('gpt-bedrock', 'what now?').catch((e: unknown) => e);
    expect((err2 as Error).message).toContain('The answer was blocked by guardrail aws');
  });

  it("masks anonymized PII with the guardrail's own outputs before the upstream sees it", async () => {
    up.enqueue({ kind: 'reply', content: 'Will do.' });
    await ask('gpt-bedrock', 'Write to carol@example.org today');
    const sent = JSON.stringify(userCalls(up).at(-1)!.body);
    expect(sent).toContain('Write to {EMAIL} today');
    expect(sent).not.toContain('carol@example.org');
    const e = gw.sink.events.at(-1)!;
    expect(e.guardrails).toContainEqual({ guardrail: 'aws', check: 'bedrock', action: 'mask', stage: 'request', kind: 'sensitiveinformation:email', count: 1 });
    expect(JSON.stringify(e)).not.toContain('carol@example.org');
  });

  it('fails closed when AWS refuses the signature, and open on a stall', async () => {
    const err = await ask('gpt-wrong-key', 'hello').catch((e: unknown) => e);
    expect((err as Error).message).toContain('guardrail aws-wrong is unavailable (check bedrock: credential)');
    expect((err as Error).message).not.toContain('not-the-secret');
    bg.enqueue({ hang: true });
    up.enqueue({ kind: 'reply', content: 'ok' });
    await expect(ask('gpt-slow', 'hello')).resolves.toBeTruthy();
    expect(gw.sink.events.at(-1)!.guardrails).toContainEqual({
      guardrail: 'aws-slow',
      check: 'bedrock',
      action: 'log',
      stage: 'request',
      kind: 'unavailable',
      count: 1,
    });
  });
});
