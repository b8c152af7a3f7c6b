// Issue 21 item 6: every field a client controls and the gateway reads or translates is checked as the real API
// checks it, before any provider sees it: Chat Completions (types and ranges, OpenAI's shape, `param` naming the
// field), sizes (`n`, `dimensions`, embeddings inputs, `top_logprobs`, tools, stop sequences), `n` on a route that
// cannot give several choices, the Anthropic endpoint's `system` role and `thinking`, and JSON with forbidden keys.
// Every refusal reaches no upstream and costs nothing: /v1/me and the usage events are unchanged. A valid body with
// every such field passes through untouched.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic-upstream.ts';
import { startFakeUpstream, type FakeUpstream } from '../fakes/upstream.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { basics, route } from '../helpers/manifests.ts';

let gw: TestGateway;
let openai: FakeUpstream;
let anthropic: FakeAnthropic;
let key: string;

beforeAll(async () => {
  [openai, anthropic] = await Promise.all([startFakeUpstream('validation-openai'), startFakeAnthropic('validation-anthropic')]);
  const b = basics();
  key = b.keys.builder;
  gw = await startGateway([
    ...b.docs,
    route('chat-o', [{ name: 'o', provider: 'openai', baseUrl: openai.baseUrl, upstreamModel: 'gpt-up' }]),
    route('claude', [{ name: 'a', provider: 'anthropic', baseUrl: anthropic.baseUrl, upstreamModel: 'claude-up' }]),
    route('mock-chat', [{ name: 'm', provider: 'mock' }]),
    route('embed', [{ name: 'e', provider: 'openai', baseUrl: openai.baseUrl }], { type: 'embeddings' }),
    route('embed-mock', [{ name: 'em', provider: 'mock' }], { type: 'embeddings' }),
  ]);
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([openai?.close(), anthropic?.close()]);
});

interface Answer {
  status: number;
  body: { type?: string; error: { message: string; type: string; code?: string; param?: string | null } };
}

async function post(path: string, body: unknown, raw = false): Promise<Answer> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (path.startsWith('/anthropic')) headers['x-api-key'] = key;
  else headers.authorization = `Bearer ${key}`;
  const res = await fetch(`${gw.url}${path}`, { method: 'POST', headers, body: raw ? String(body) : JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Answer['body'] };
}

/** What a refusal must not change: the account's money, the usage events, the upstreams' traffic. */
async function costs(): Promise<unknown> {
  const me = (await (await fetch(`${gw.url}/v1/me`, { headers: { authorization: `Bearer ${key}` } })).json()) as Record<string, unknown>;
  return { balance: me.balance_usd, spend: me.month_spend_usd, events: gw.sink.events.length, upstream: openai.calls.length + anthropic.calls.length };
}

const msgs = [{ role: 'user', content: 'hi' }];
const chat = (extra: object): object => ({ model: 'chat-o', messages: msgs, ...extra });

describe('/v1/chat/completions checks what it reads as OpenAI does (400, param names the field)', () => {
  it.each([
    ['temperature "x"', chat({ temperature: 'x' }), 'temperature'],
    ['temperature 2.5', chat({ temperature: 2.5 }), 'temperature'],
    ['top_p 1.5', chat({ top_p: 1.5 }), 'top_p'],
    ['stop 5', chat({ stop: 5 }), 'stop'],
    ['five stop sequences', chat({ stop: ['a', 'b', 'c', 'd', 'e'] }), 'stop'],
    ['tools 5', chat({ tools: 5 }), 'tools'],
    ['a tool of an unknown type', chat({ tools: [{ type: 'robot' }] }), 'tools[0].type'],
    ['a function tool without a name', chat({ tools: [{ type: 'function', function: {} }] }), 'tools[0].function.name'],
    ['129 tools', chat({ tools: Array.from({ length: 129 }, (_, i) => ({ type: 'function', function: { name: `f${i}` } })) }), 'tools'],
    ['tool_choice "maybe"', chat({ tool_choice: 'maybe' }), 'tool_choice'],
    ['tool_choice without its function', chat({ tool_choice: { type: 'function' } }), 'tool_choice.function'],
    ['response_format "json"', chat({ response_format: 'json' }), 'response_format'],
    ['response_format of an unknown type', chat({ response_format: { type: 'xml' } }), 'response_format.type'],
    ['seed 1.5', chat({ seed: 1.5 }), 'seed'],
    ['logit_bias "x"', chat({ logit_bias: 'x' }), 'logit_bias'],
    ['logit_bias of 500', chat({ logit_bias: { '50256': 500 } }), 'logit_bias.50256'],
    ['n 0', chat({ n: 0 }), 'n'],
    ['n -1', chat({ n: -1 }), 'n'],
    ['n 1000', chat({ n: 1000 }), 'n'],
    ['n "x"', chat({ n: 'x' }), 'n'],
    ['top_logprobs 21', chat({ top_logprobs: 21 }), 'top_logprobs'],
    ['presence_penalty 3', chat({ presence_penalty: 3 }), 'presence_penalty'],
    ['a message without content', chat({ messages: [{ role: 'user' }] }), 'messages[0].content'],
    ['a text part whose text is a number', chat({ messages: [{ role: 'user', content: [{ type: 'text', text: 5 }] }] }), 'messages[0].content[0].text'],
    ['a content part of an unknown type', chat({ messages: [{ role: 'user', content: [{ type: 'video' }] }] }), 'messages[0].content[0].type'],
    [
      'an image part on a system message',
      chat({ messages: [{ role: 'system', content: [{ type: 'image_url', image_url: { url: 'x' } }] }] }),
      'messages[0].content[0].type',
    ],
    ['a tool message without tool_call_id', chat({ messages: [...msgs, { role: 'tool', content: 'r' }] }), 'messages[1].tool_call_id'],
    ['an unknown role', chat({ messages: [{ role: 'wizard', content: 'x' }] }), 'messages[0].role'],
  ])('%s', async (_name, body, param) => {
    const before = await costs();
    const r = await post('/v1/chat/completions', body);
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request', param });
    expect(r.body.error.message).toContain(param);
    expect(await costs()).toEqual(before);
  });

  it('passes a valid body with every checked field (and an unknown one) to the upstream untouched', async () => {
    const body = chat({
      temperature: 0.5,
      top_p: 0.9,
      stop: ['\n\n', 'END'],
      seed: 42,
      logit_bias: { '50256': -100 },
      n: 2,
      max_completion_tokens: 100, // with a cap given, the gateway adds none (estimate.ts)
      presence_penalty: 0.5,
      frequency_penalty: -0.5,
      logprobs: true,
      top_logprobs: 3,
      response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object' }, strict: true } },
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } }],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      some_future_field: { kept: true },
      messages: [
        { role: 'developer', content: [{ type: 'text', text: 'Be brief.' }] },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Hi' },
            { type: 'image_url', image_url: { url: 'https://x/y.png', detail: 'low' } },
          ],
        },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
      ],
    });
    const r = await post('/v1/chat/completions', body);
    expect(r.status).toBe(200);
    expect(openai.calls.at(-1)?.body).toEqual({ ...body, model: 'gpt-up' });
  });
});

describe('n: several choices where the route can give them, 400 where it cannot', () => {
  it('the mock gives n choices, billed as n replies', async () => {
    const one = await post('/v1/chat/completions', { model: 'mock-chat', messages: msgs });
    const three = (await post('/v1/chat/completions', { model: 'mock-chat', messages: msgs, n: 3 })) as unknown as {
      status: number;
      body: { choices: Array<{ index: number }>; usage: { completion_tokens: number } };
    };
    expect(three.status).toBe(200);
    expect(three.body.choices.map((c) => c.index)).toEqual([0, 1, 2]);
    expect(three.body.usage.completion_tokens).toBe(3 * (one.body as unknown as { usage: { completion_tokens: number } }).usage.completion_tokens);
  });

  it('an Anthropic upstream cannot: 400 naming n, at no cost', async () => {
    const before = await costs();
    const r = await post('/v1/chat/completions', { model: 'claude', messages: msgs, n: 3 });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ param: 'n', code: 'unsupported_content' });
    expect(await costs()).toEqual(before);
  });
});

describe('/v1/embeddings bounds every size before a provider sees it', () => {
  it.each([
    ['dimensions 1e9', { dimensions: 1_000_000_000 }, 'dimensions'],
    ['dimensions 1e7', { dimensions: 10_000_000 }, 'dimensions'],
    ['dimensions 3073', { dimensions: 3073 }, 'dimensions'],
    ['dimensions 0', { dimensions: 0 }, 'dimensions'],
    ['2049 inputs', { input: Array.from({ length: 2049 }, () => 'a') }, 'input'],
    ['encoding_format "hex"', { encoding_format: 'hex' }, 'encoding_format'],
  ])('%s: 400, at no cost', async (_name, extra, param) => {
    for (const model of ['embed', 'embed-mock']) {
      const before = await costs();
      const r = await post('/v1/embeddings', { model, input: 'x', ...extra });
      expect(r.status).toBe(400);
      expect(r.body.error).toMatchObject({ code: 'invalid_request', param });
      expect(await costs()).toEqual(before);
    }
  });

  it('serves the largest dimensions OpenAI gives (3072)', async () => {
    const r = (await post('/v1/embeddings', { model: 'embed-mock', input: 'x', dimensions: 3072 })) as unknown as {
      status: number;
      body: { data: Array<{ embedding: number[] }> };
    };
    expect(r.status).toBe(200);
    expect(r.body.data[0]?.embedding).toHaveLength(3072);
  });
});

describe('/v1/responses bounds what it reads', () => {
  it.each([
    ['top_logprobs 21', { top_logprobs: 21 }, 'top_logprobs'],
    ['max_tool_calls 0', { max_tool_calls: 0 }, 'max_tool_calls'],
  ])('%s: 400, at no cost', async (_name, extra, param) => {
    const before = await costs();
    const r = await post('/v1/responses', { model: 'chat-o', input: 'hi', ...extra });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ param });
    expect(await costs()).toEqual(before);
  });
});

describe('/anthropic/v1/messages refuses what Anthropic refuses, in its shape and words', () => {
  const msg = (extra: object): object => ({ model: 'claude', max_tokens: 100, messages: msgs, ...extra });
  it.each([
    [
      'a system message inside messages',
      msg({ messages: [{ role: 'system', content: 'Be brief.' }, ...msgs] }),
      'messages.0.role: Unexpected role "system". The Messages API accepts a top-level `system` parameter, not "system" as an input message role.',
    ],
    ['thinking without a type', msg({ thinking: { budget_tokens: -1 } }), "thinking.type: Unable to extract tag using discriminator 'type'"],
    [
      'a negative thinking budget',
      msg({ thinking: { type: 'enabled', budget_tokens: -1 } }),
      'thinking.budget_tokens: Input should be greater than or equal to 1024',
    ],
    ['thinking 5', msg({ thinking: 5 }), 'thinking: Input should be a valid dictionary or object to extract fields from'],
    [
      'a thinking budget over max_tokens',
      msg({ max_tokens: 2000, thinking: { type: 'enabled', budget_tokens: 4000 } }),
      '`max_tokens` must be greater than `thinking.budget_tokens`',
    ],
  ])('%s', async (_name, body, message) => {
    for (const model of ['claude', 'chat-o']) {
      const before = await costs();
      const r = await post('/anthropic/v1/messages', { ...body, model });
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ type: 'error', error: { type: 'invalid_request_error', message } });
      expect(await costs()).toEqual(before);
    }
  });

  it('serves adaptive and enabled thinking', async () => {
    expect((await post('/anthropic/v1/messages', msg({ thinking: { type: 'adaptive' } }))).status).toBe(200);
    expect((await post('/anthropic/v1/messages', msg({ max_tokens: 2000, thinking: { type: 'enabled', budget_tokens: 1024 } }))).status).toBe(200);
  });
});

describe('a body with a forbidden key is valid JSON refused for that key', () => {
  it.each([
    ['/v1/chat/completions', '{"__proto__":{"polluted":1},"model":"chat-o","messages":[{"role":"user","content":"hi"}]}'],
    ['/v1/chat/completions', '{"model":"chat-o","messages":[{"role":"user","content":"hi","constructor":{"prototype":{"x":1}}}]}'],
    ['/anthropic/v1/messages', '{"__proto__":{"polluted":1},"model":"claude","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}'],
  ])('%s %s', async (path, text) => {
    const before = await costs();
    const r = await post(path, text, true);
    expect(r.status).toBe(400);
    expect(r.body.error.message).toContain('valid JSON but has a forbidden key');
    expect(r.body.error.message).not.toContain('not valid JSON');
    expect(await costs()).toEqual(before);
  });
});
