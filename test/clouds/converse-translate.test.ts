// The Converse translators' output read by the official clients, as a client of the gateway reads it: each Converse
// answer of the golden samples is also streamed (as Bedrock streams the same answer: text in fragments, tool input
// as partial JSON, reasoning then its signature, usage last), the translated stream served on 127.0.0.1 to the
// `openai` SDK (chat.completions.stream, responses.stream) and `@anthropic-ai/sdk` (messages.stream), whose
// accumulated results must equal the unstreamed translation; every body and event is checked against OpenAI's
// published OpenAPI description, and a streamed call reports the same usage (so costs the same) as the unstreamed one.
import Anthropic from '@anthropic-ai/sdk';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeRequest } from '../../gateway/availability/probe.ts';
import { anthropicFromConverse } from '../../gateway/translate/anthropic/anthropic-converse.ts';
import { openAIFromConverse } from '../../gateway/translate/openai/openai-converse.ts';
import { responsesFromConverse } from '../../gateway/translate/responses/responses-converse.ts';
import { loadGolden, MODEL, TARGET } from '../../gateway/translate/testdata/golden.ts';
import type { Translation } from '../../gateway/translate/types.ts';
import { expectConforms } from '../helpers/openapi.ts';

type Json = Record<string, unknown>;
const CONVERSE = { ...TARGET, provider: 'bedrock' as const };
const ANSWERS = loadGolden('converse/openai-converse').data.response.filter((c) => !c.name.includes('usage'));

/** One Converse answer as Bedrock streams it: the SSE events the transport yields for its frames. */
function streamOf(answer: Json): string {
  const ev = (name: string, data: unknown): string => `event: ${name}\ndata: ${JSON.stringify({ ...(data as Json), p: 'abcdefgh' })}\n\n`;
  const halves = (s: string): string[] => [s.slice(0, Math.ceil(s.length / 2)), s.slice(Math.ceil(s.length / 2))].filter((x) => x !== '');
  const message = (answer.output as { message: { content: Json[] } }).message;
  let out = ev('messageStart', { role: 'assistant' });
  message.content.forEach((b, i) => {
    if (typeof b.text === 'string') for (const text of halves(b.text)) out += ev('contentBlockDelta', { contentBlockIndex: i, delta: { text } });
    const use = b.toolUse as Json | undefined;
    if (use) {
      out += ev('contentBlockStart', { contentBlockIndex: i, start: { toolUse: { toolUseId: use.toolUseId, name: use.name } } });
      for (const input of halves(JSON.stringify(use.input))) out += ev('contentBlockDelta', { contentBlockIndex: i, delta: { toolUse: { input } } });
    }
    const r = b.reasoningContent as { reasoningText?: { text: string; signature: string }; redactedContent?: string } | undefined;
    if (r?.reasoningText) {
      for (const text of halves(r.reasoningText.text)) out += ev('contentBlockDelta', { contentBlockIndex: i, delta: { reasoningContent: { text } } });
      out += ev('contentBlockDelta', { contentBlockIndex: i, delta: { reasoningContent: { signature: r.reasoningText.signature } } });
    }
    if (r?.redactedContent) out += ev('contentBlockDelta', { contentBlockIndex: i, delta: { reasoningContent: { redactedContent: r.redactedContent } } });
    out += ev('contentBlockStop', { contentBlockIndex: i });
  });
  return out + ev('messageStop', { stopReason: answer.stopReason }) + ev('metadata', { usage: answer.usage, metrics: { latencyMs: 100 } });
}

/** The client-facing stream of a translation for a Converse stream, as the pipeline writes it. */
function translateStream(t: Translation, converse: string): { text: string; usage: unknown } {
  const tr = t.stream('public-model');
  let text = '';
  for (const frame of converse.split('\n\n').filter((f) => f !== '')) {
    const [head = '', data = ''] = frame.split('\n');
    text += tr.event({ event: head.slice('event: '.length), data: data.slice('data: '.length) });
  }
  expect(tr.complete).toBe(true);
  expect(tr.failed).toBe(false);
  return { text: text + tr.finish(), usage: tr.usage() };
}

/** The next answer the loopback server gives, whatever the SDK asks. */
let next = { type: 'application/json', body: '' };
let server: Server;
let base = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': next.type });
      res.end(next.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

function dataOf(sse: string): unknown[] {
  return sse
    .split('\n\n')
    .flatMap((f) => f.split('\n').filter((l) => l.startsWith('data: ')))
    .map((l) => l.slice(6))
    .filter((d) => d !== '[DONE]')
    .map((d) => JSON.parse(d) as unknown);
}

describe.each(ANSWERS)('$name', ({ upstream }) => {
  const answer = upstream as Json;

  it('OpenAI Chat: the SDK accumulates the stream into the unstreamed completion', async () => {
    const client = { model: 'public-model', messages: [{ role: 'user', content: 'Hi' }], stream: true, stream_options: { include_usage: true } };
    const plain = openAIFromConverse(client).response(JSON.stringify(answer), 'public-model');
    const completion = JSON.parse(plain.body) as { choices: Array<{ message: unknown; finish_reason: string }>; usage: unknown };
    expectConforms('CreateChatCompletionResponse', completion);
    const streamed = translateStream(openAIFromConverse(client), streamOf(answer));
    for (const chunk of dataOf(streamed.text)) expectConforms('CreateChatCompletionStreamResponse', chunk);
    next = { type: 'text/event-stream', body: streamed.text };
    const sdk = new OpenAI({ baseURL: base, apiKey: 'k', maxRetries: 0 });
    const final = await sdk.chat.completions
      .stream({ model: 'public-model', messages: [{ role: 'user', content: 'Hi' }], stream_options: { include_usage: true } })
      .finalChatCompletion();
    const { role, content, tool_calls } = final.choices[0]?.message ?? {};
    const want = completion.choices[0]?.message as { role: string; content: string | null; tool_calls?: unknown };
    expect({ role, content: content ?? null, tool_calls }).toEqual({
      role: want.role,
      content: want.content === '' ? null : want.content,
      tool_calls: want.tool_calls,
    });
    expect(final.choices[0]?.finish_reason).toBe(completion.choices[0]?.finish_reason);
    expect(final.usage).toEqual(completion.usage);
    expect(streamed.usage).toEqual(plain.usage);
  });

  it('Anthropic Messages: MessageStream accumulates the stream into the unstreamed message', async () => {
    const client = { model: 'public-model', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }], stream: true };
    const plain = anthropicFromConverse(client).response(JSON.stringify(answer), 'public-model');
    const message = JSON.parse(plain.body) as Json;
    const streamed = translateStream(anthropicFromConverse(client), streamOf(answer));
    next = { type: 'text/event-stream', body: streamed.text };
    const sdk = new Anthropic({ baseURL: base, apiKey: 'k', maxRetries: 0 });
    const final = await sdk.messages.stream({ model: 'public-model', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] }).finalMessage();
    const content = (message.content as Json[]).filter((b) => !(b.type === 'text' && b.text === ''));
    expect(final.content).toEqual(content);
    expect(final.stop_reason).toBe(message.stop_reason);
    expect(final.usage).toMatchObject(message.usage as Json);
    expect(streamed.usage).toEqual(plain.usage);
  });

  it('Responses: the SDK accumulates the events into the unstreamed response', async () => {
    const client = { model: 'public-model', input: 'Hi', stream: true };
    const t = responsesFromConverse(client);
    t.request(CONVERSE, MODEL);
    const plain = t.response(JSON.stringify(answer), 'public-model');
    const response = JSON.parse(plain.body) as { output: Json[]; status: string; usage: unknown };
    expectConforms('Response', response);
    const streamed = translateStream(t, streamOf(answer));
    for (const e of dataOf(streamed.text)) expectConforms('ResponseStreamEvent', e);
    next = { type: 'text/event-stream', body: streamed.text };
    const sdk = new OpenAI({ baseURL: base, apiKey: 'k', maxRetries: 0 });
    const final = await sdk.responses.stream({ model: 'public-model', input: 'Hi' }).finalResponse();
    // Item ids differ (the stream numbers its items); the SDK adds its parse results (parsed, parsed_arguments).
    const noIds = (items: unknown[]): unknown =>
      JSON.parse(JSON.stringify(items, (k, v: unknown) => (k === 'id' || k === 'parsed' || k === 'parsed_arguments' ? undefined : v)));
    expect(noIds(final.output)).toEqual(noIds(response.output));
    expect(final.status).toBe(response.status);
    expect(final.usage).toEqual(response.usage);
    expect(streamed.usage).toEqual(plain.usage);
  });
});

describe('a Converse exception mid-stream', () => {
  const failing =
    'event: messageStart\ndata: {"role":"assistant"}\n\n' +
    'event: contentBlockDelta\ndata: {"contentBlockIndex":0,"delta":{"text":"Hel"}}\n\n' +
    'event: error\ndata: {"type":"ModelStreamErrorException","message":"The model stream failed."}\n\n';

  function failed(t: Translation): string {
    const tr = t.stream('public-model');
    const text = failing
      .split('\n\n')
      .filter((f) => f !== '')
      .map((f) => {
        const [head = '', data = ''] = f.split('\n');
        return tr.event({ event: head.slice(7), data: data.slice(6) });
      })
      .join('');
    expect(tr.failed).toBe(true);
    return text;
  }

  it('is raised by the openai SDK (Chat) and the Anthropic SDK', async () => {
    next = { type: 'text/event-stream', body: failed(openAIFromConverse({ stream: true })) };
    const openai = new OpenAI({ baseURL: base, apiKey: 'k', maxRetries: 0 });
    await expect(openai.chat.completions.stream({ model: 'm', messages: [{ role: 'user', content: 'Hi' }] }).finalChatCompletion()).rejects.toThrow(
      /The model stream failed/,
    );
    next = { type: 'text/event-stream', body: failed(anthropicFromConverse({ stream: true })) };
    const anthropic = new Anthropic({ baseURL: base, apiKey: 'k', maxRetries: 0 });
    await expect(anthropic.messages.stream({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] }).finalMessage()).rejects.toThrow(
      /The model stream failed/,
    );
  });

  it('ends a Responses stream with events of the description, raised by the SDK', async () => {
    const t = responsesFromConverse({ input: 'Hi', stream: true });
    t.request(CONVERSE, MODEL);
    const text = failed(t);
    for (const e of dataOf(text)) expectConforms('ResponseStreamEvent', e);
    next = { type: 'text/event-stream', body: text };
    const openai = new OpenAI({ baseURL: base, apiKey: 'k', maxRetries: 0 });
    await expect(openai.responses.stream({ model: 'm', input: 'Hi' }).finalResponse()).rejects.toThrow(/The model stream failed/);
  });
});

describe('the availability probe of a Converse target', () => {
  it('is the minimal call a client would make, translated: one user message, maxTokens 1, no model in the body', () => {
    const req = probeRequest(MODEL, CONVERSE, 'converse');
    expect(req.operation).toBe('chat');
    expect(JSON.parse(req.body)).toEqual({ messages: [{ role: 'user', content: [{ text: 'ping' }] }], inferenceConfig: { maxTokens: 1 } });
  });
});
