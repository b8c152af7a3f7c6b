// A streamed answer a guardrail blocks mid-way, as callers and the ledger see it through the official SDKs: the
// stream ends with the dialect's error event naming the guardrail; the upstream call is cancelled at once (the fake
// upstream stalls after the secret and only a cancel ends its request); the usage event names the block (400
// content_blocked, the block among its guardrail facts), never a client that left; and what the upstream produced
// before the block is charged, as for a client gone mid-stream, never the matched text anywhere in the event.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic-upstream.ts';
import { startFakeUpstream, type FakeUpstream } from '../fakes/upstream.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { basics, route } from '../helpers/manifests.ts';
import { until } from '../helpers/until.ts';
import type { UsageEvent } from '../../gateway/usage/event.ts';

const AWS_KEY = 'AKIAZ7Q3XKQ4PLMNB2WE';
// Longer than the held-back window (stream-guard.ts), so the secret is checked while the stream is still open.
const AFTER = ' and then some more words of the answer'.repeat(10);

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
      apiVersion: 'gateway.svc.dev/v1alpha1',
      kind: 'Guardrail',
      metadata: { name: 'no-secrets' },
      spec: { stages: ['response'], checks: [{ detector: 'secrets', action: 'block' }] },
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

async function eventAfter(count: number): Promise<UsageEvent> {
  await until(() => gw.sink.events.length > count, 10_000, 'the usage event of the blocked stream');
  return gw.sink.events.at(-1)!;
}

function expectBlocked(e: UsageEvent, endpoint: string): void {
  expect(e.endpoint).toBe(endpoint);
  expect(e.stream).toBe(true);
  expect(e.status).toBe(400);
  expect(e.errorCode).toBe('content_blocked');
  expect(e.guardrails).toEqual([{ guardrail: 'no-secrets', check: 'secrets', action: 'block', stage: 'response', kind: 'aws-access-key', count: 1 }]);
  // The upstream produced tokens before the block: charged as a stream cut short is (estimated from what was served).
  expect(e.outputTokens).toBeGreaterThan(0);
  expect(e.costNano).toBeGreaterThan(0);
  expect(JSON.stringify(e)).not.toContain(AWS_KEY);
}

describe('a streamed answer blocked mid-way', () => {
  it('chat completions: an error event naming the guardrail, the upstream cancelled, content_blocked on the usage event', async () => {
    const events = gw.sink.events.length;
    up.enqueue({ kind: 'reply', content: 'x', pieces: [`Here it is: ${AWS_KEY}`, AFTER], thenStall: true });
    const stream = await openai.chat.completions.create({ model: 'gpt-guarded', stream: true, messages: [{ role: 'user', content: 'what key?' }] });
    let text = '';
    const err = await (async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toContain('The answer was blocked by guardrail no-secrets');
    expect((err as Error).message).not.toContain(AWS_KEY);
    expect(text).not.toContain('AKIA');
    const e = await eventAfter(events);
    expectBlocked(e, 'chat.completions');
    expect(e.servedModel).toBe('gpt-guarded');
    // The stalled upstream request was ended by the gateway, not left open.
    await until(() => up.open === 0, 10_000, 'the upstream request cancelled');
    const m = await gw.metrics.registry.getSingleMetricAsString('svc_gateway_requests_total');
    expect(m).not.toContain('client_closed');
  });

  it('Anthropic Messages: the error event, the upstream cancelled, content_blocked on the usage event', async () => {
    const events = gw.sink.events.length;
    ant.enqueue({ kind: 'reply', text: `Here it is: ${AWS_KEY}${AFTER}`, thenStall: true });
    const s = anthropic.messages.stream({ model: 'claude-guarded', max_tokens: 200, messages: [{ role: 'user', content: 'what key?' }] });
    let text = '';
    s.on('text', (t) => (text += t));
    const err = await s.finalMessage().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toContain('The answer was blocked by guardrail no-secrets');
    expect(text).not.toContain('AKIA');
    const e = await eventAfter(events);
    expectBlocked(e, 'messages');
    expect(e.inputTokens).toBeGreaterThan(0);
    await until(() => ant.open === 0, 10_000, 'the upstream request cancelled');
  });

  it('a non-streamed answer blocked is named the same way and charged for what the upstream produced', async () => {
    const events = gw.sink.events.length;
    up.enqueue({ kind: 'reply', content: `Use ${AWS_KEY} for that.`, usage: { prompt_tokens: 9, completion_tokens: 6 } });
    const err = await openai.chat.completions.create({ model: 'gpt-guarded', messages: [{ role: 'user', content: 'what key?' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    const e = await eventAfter(events);
    expect(e.status).toBe(400);
    expect(e.errorCode).toBe('content_blocked');
    expect(e.outputTokens).toBe(6);
    expect(e.costNano).toBeGreaterThan(0);
  });
});
