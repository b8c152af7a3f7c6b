// Guardrails as callers meet them, through the official SDKs: a blocked request is a 400 content_blocked in the
// caller's dialect naming the guardrail (never the matched text) and costs nothing; a masked request reaches the
// upstream with placeholders and the answer comes back with the caller's own values; a secret in an answer is
// caught even when it arrives split across stream chunks; every match is a fact on the usage event and a metric.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic-upstream.ts';
import { startFakeUpstream, type FakeUpstream } from '../fakes/upstream.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { basics, route } from '../helpers/manifests.ts';

const API = 'gateway.svc.dev/v1alpha1';
const EMAIL = 'jane.doe@example.com';
const AWS_KEY = 'AKIAZ7Q3XKQ4PLMNB2WE';
const CARD = '4111 1111 1111 1111';

let up: FakeUpstream;
let ant: FakeAnthropic;
let gw: TestGateway;
let openai: OpenAI;
let anthropic: Anthropic;

beforeAll(async () => {
  up = await startFakeUpstream();
  ant = await startFakeAnthropic();
  const b = basics();
  gw = await startGateway([
    ...b.docs,
    route('gpt-guarded', [{ name: 'oa', provider: 'openai', baseUrl: up.baseUrl }]),
    route('claude-guarded', [{ name: 'an', provider: 'anthropic', baseUrl: ant.baseUrl }]),
    {
      apiVersion: API,
      kind: 'Guardrail',
      metadata: { name: 'company' },
      spec: {
        checks: [
          { detector: 'secrets', action: 'block' },
          { detector: 'card', action: 'block' },
          { detector: 'email', action: 'mask', restore: true },
          { name: 'codename', detector: 'words', words: ['Project Falcon'], action: 'log' },
        ],
      },
    },
  ]);
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: b.keys.builder, maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: `${gw.url}/anthropic`, apiKey: b.keys.builder, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await up?.close();
  await ant?.close();
});

const lastEvent = () => gw.sink.events.at(-1)!;
const callsTo = (f: { calls: { body: Record<string, unknown> }[] }) => f.calls.filter((c) => !JSON.stringify(c.body).includes('"ping"'));

describe('request checks', () => {
  it('blocks a secret in a chat prompt with content_blocked, calls no upstream and charges nothing', async () => {
    const before = callsTo(up).length;
    const events = gw.sink.events.length;
    const err = await openai.chat.completions
      .create({ model: 'gpt-guarded', messages: [{ role: 'user', content: `deploy with ${AWS_KEY} please` }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    const e = err as InstanceType<typeof OpenAI.BadRequestError>;
    expect(e.message).toContain('guardrail company');
    expect(e.message).toContain('aws-access-key');
    expect(e.message).not.toContain(AWS_KEY);
    expect((e.error as { code?: string }).code).toBe('content_blocked');
    expect(callsTo(up).length).toBe(before);
    // One event records the block (so usage counts it by key and guardrail): nothing charged, never the text.
    expect(gw.sink.events.length).toBe(events + 1);
    expect(lastEvent()).toMatchObject({ status: 400, errorCode: 'content_blocked', costNano: 0, inputTokens: 0, outputTokens: 0, upstream: null });
    expect(lastEvent().guardrails).toEqual([{ guardrail: 'company', check: 'secrets', action: 'block', stage: 'request', kind: 'aws-access-key', count: 1 }]);
    expect(JSON.stringify(lastEvent())).not.toContain(AWS_KEY);
    const m = await gw.metrics.registry.getSingleMetricAsString('svc_gateway_guardrail_matches_total');
    expect(m).toMatch(/guardrail="company",check="secrets",action="block",stage="request",kind="aws-access-key"\} 1/);
    expect(m).not.toContain(AWS_KEY);
  });

  it('blocks a Luhn-valid card in an Anthropic system prompt in the Anthropic dialect', async () => {
    const err = await anthropic.messages
      .create({ model: 'claude-guarded', max_tokens: 50, system: `Card on file: ${CARD}`, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect(JSON.stringify((err as { error: unknown }).error)).toContain('invalid_request_error');
    expect((err as Error).message).toContain('guardrail company');
    expect((err as Error).message).not.toContain('4111');
  });

  it('passes a card-like number that fails the Luhn check', async () => {
    const r = await openai.chat.completions.create({ model: 'gpt-guarded', messages: [{ role: 'user', content: 'order 4111 1111 1111 1112 shipped' }] });
    expect(r.choices[0]!.message.content).toBeTruthy();
  });

  it('masks an email before the upstream sees it and restores it in the answer (OpenAI, not streamed)', async () => {
    up.enqueue({ kind: 'reply', content: 'I will write to <EMAIL_1> today.' });
    const r = await openai.chat.completions.create({ model: 'gpt-guarded', messages: [{ role: 'user', content: `Email ${EMAIL} about Project Falcon.` }] });
    const sent = JSON.stringify(callsTo(up).at(-1)!.body);
    expect(sent).toContain('<EMAIL_1>');
    expect(sent).not.toContain(EMAIL);
    expect(r.choices[0]!.message.content).toBe(`I will write to ${EMAIL} today.`);
    const facts = lastEvent().guardrails!;
    expect(facts).toEqual(
      expect.arrayContaining([
        { guardrail: 'company', check: 'email', action: 'mask', stage: 'request', kind: 'email', count: 1 },
        { guardrail: 'company', check: 'codename', action: 'log', stage: 'request', kind: 'word', count: 1 },
      ]),
    );
    expect(JSON.stringify(lastEvent())).not.toContain(EMAIL);
  });

  it('masks a full-width, zero-width-split email as well', async () => {
    const hidden = 'ｊａｎｅ\u200B@ｅｘａｍｐｌｅ．ｃｏｍ';
    await openai.chat.completions.create({ model: 'gpt-guarded', messages: [{ role: 'user', content: `mail ${hidden} now` }] });
    const sent = JSON.stringify(callsTo(up).at(-1)!.body);
    expect(sent).toContain('mail <EMAIL_1> now');
  });

  it('masks and restores through the Anthropic SDK, streamed', async () => {
    ant.enqueue({ kind: 'reply', text: 'Sure, <EMAIL_1> is noted.' });
    const s = anthropic.messages.stream({ model: 'claude-guarded', max_tokens: 50, messages: [{ role: 'user', content: `My email is ${EMAIL}` }] });
    const msg = await s.finalMessage();
    expect(JSON.stringify(ant.calls.at(-1)!.body)).not.toContain(EMAIL);
    const first = msg.content[0];
    expect(first?.type === 'text' ? first.text : null).toBe(`Sure, ${EMAIL} is noted.`);
  });
});

describe('answer checks', () => {
  it('blocks a secret in a non-streamed answer', async () => {
    up.enqueue({ kind: 'reply', content: `Use key ${AWS_KEY} for that.` });
    const err = await openai.chat.completions.create({ model: 'gpt-guarded', messages: [{ role: 'user', content: 'what key?' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as Error).message).toContain('The answer was blocked by guardrail company');
    expect((err as Error).message).not.toContain(AWS_KEY);
  });

  it('catches a secret split across stream chunks and ends the stream with an error event', async () => {
    up.enqueue({ kind: 'reply', content: `x`, pieces: ['Here it is: AKIAZ7Q3', 'XKQ4PLMN', 'B2WE and more text after it.'] });
    const stream = await openai.chat.completions.create({ model: 'gpt-guarded', stream: true, messages: [{ role: 'user', content: 'what key?' }] });
    let text = '';
    const err = await (async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(String((err as Error).message)).toContain('guardrail company');
    expect(text).not.toContain('AKIAZ7Q3');
  });

  it('streams an answer with nothing to find unchanged, in order', async () => {
    const words = Array.from({ length: 120 }, (_, i) => `word${i} `);
    up.enqueue({ kind: 'reply', content: words.join(''), pieces: words });
    const stream = await openai.chat.completions.create({ model: 'gpt-guarded', stream: true, messages: [{ role: 'user', content: 'count' }] });
    let text = '';
    let finish: string | null = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(text).toBe(words.join(''));
    expect(finish).toBe('stop');
    expect(lastEvent().status).toBe(200);
  });

  it('restores a placeholder split across stream chunks', async () => {
    up.enqueue({ kind: 'reply', content: 'x', pieces: ['Noted: <EMA', 'IL_1', '> will hear from us.'] });
    const stream = await openai.chat.completions.create({ model: 'gpt-guarded', stream: true, messages: [{ role: 'user', content: `reach ${EMAIL}` }] });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe(`Noted: ${EMAIL} will hear from us.`);
  });
});
