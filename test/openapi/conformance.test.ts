// Every answer of the OpenAI-compatible surface validated against OpenAI's published OpenAPI description (the
// pinned copy next to this file): Chat Completions (plain, every streamed chunk, tool calls), embeddings, models,
// the Responses API (the response object and every streamed event, response.completed included) and the error
// bodies, served by an OpenAI-format upstream (translated for /v1/responses) and an Anthropic-format one. Strictly
// typed clients generated from the description decode exactly what it requires.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic-upstream.ts';
import { startFakeUpstream, type FakeUpstream } from '../fakes/upstream.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { basics, route } from '../helpers/manifests.ts';
import { expectConforms } from '../helpers/openapi.ts';

let gw: TestGateway;
let openai: FakeUpstream;
let anthropic: FakeAnthropic;
let key: string;

const fast = { connectMs: 500, firstByteMs: 2_000, idleMs: 2_000, totalMs: 20_000 };

beforeAll(async () => {
  [openai, anthropic] = await Promise.all([startFakeUpstream('openai-fake'), startFakeAnthropic()]);
  const b = basics();
  key = b.keys.builder;
  gw = await startGateway([
    ...b.docs,
    route('gpt-chat', [{ name: 'chat-a', provider: 'openai', baseUrl: openai.baseUrl, upstreamModel: 'gpt-upstream', timeouts: fast }]),
    route('claude-test', [{ name: 'anthropic-a', provider: 'anthropic', baseUrl: anthropic.baseUrl, upstreamModel: 'claude-upstream', timeouts: fast }]),
    route('embed', [{ name: 'embed-a', provider: 'openai', baseUrl: openai.baseUrl, upstreamModel: 'text-embedding-3-small', timeouts: fast }], {
      type: 'embeddings',
    }),
    route('mock-mini', [{ name: 'mock-a', provider: 'mock' }]),
  ]);
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([openai?.close(), anthropic?.close()]);
});

async function post(path: string, body: unknown, auth = key): Promise<Response> {
  return fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${auth}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/** The `data:` payloads of an SSE body, [DONE] left out, parsed. */
async function events(res: Response): Promise<unknown[]> {
  expect(res.headers.get('content-type')).toContain('text/event-stream');
  const text = await res.text();
  return text
    .split('\n\n')
    .flatMap((frame) => frame.split('\n').filter((l) => l.startsWith('data:')))
    .map((l) => l.slice(5).trim())
    .filter((d) => d !== '' && d !== '[DONE]')
    .map((d) => JSON.parse(d) as unknown);
}

const weather = {
  type: 'function',
  function: { name: 'get_weather', description: 'Weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
};
const weatherTool = { type: 'function', name: 'get_weather', description: 'Weather of a city', parameters: weather.function.parameters, strict: false };

const UPSTREAMS = [
  { name: 'OpenAI-format', model: 'gpt-chat' },
  { name: 'Anthropic-format', model: 'claude-test' },
  { name: 'mock', model: 'mock-mini' },
] as const;
/** The mock answers text only: tool calls and cut streams are scripted on the two fake upstreams. */
const SCRIPTED = UPSTREAMS.filter((u) => u.model !== 'mock-mini');

function replyWithTool(model: string): void {
  if (model === 'gpt-chat') openai.enqueue({ kind: 'reply', toolCalls: [{ id: 'call_w1', name: 'get_weather', arguments: '{"city":"Paris"}' }] });
  else anthropic.enqueue({ kind: 'reply', text: 'Looking.', tools: [{ id: 'toolu_w1', name: 'get_weather', input: { city: 'Paris' } }] });
}

/** The upstream reports cache reads and (Anthropic) cache writes: the answer carries both, as the description requires. */
function replyWithCache(model: string): void {
  if (model === 'gpt-chat') openai.enqueue({ kind: 'reply', content: 'Cached.', usage: { prompt_tokens: 40, cached_tokens: 8, completion_tokens: 5 } });
  else
    anthropic.enqueue({
      kind: 'reply',
      text: 'Cached.',
      usage: { input_tokens: 10, cache_read_input_tokens: 8, cache_creation_input_tokens: 22, output_tokens: 5 },
    });
}

describe.each(UPSTREAMS)('/v1/chat/completions conforms, $name upstream', ({ model }) => {
  it('plain answer', async () => {
    const res = await post('/v1/chat/completions', { model, messages: [{ role: 'user', content: 'Hi' }] });
    expect(res.status).toBe(200);
    expectConforms('CreateChatCompletionResponse', await res.json());
  });

  it('every streamed chunk, the usage chunk included', async () => {
    const res = await post('/v1/chat/completions', {
      model,
      messages: [{ role: 'user', content: 'Hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(res.status).toBe(200);
    const chunks = await events(res);
    expect(chunks.length).toBeGreaterThan(1);
    for (const c of chunks) expectConforms('CreateChatCompletionStreamResponse', c);
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: expect.any(Number) } });
  });
});

describe.each(SCRIPTED)('/v1/chat/completions tool calls conform, $name upstream', ({ model }) => {
  it('tool calls, plain and streamed', async () => {
    replyWithTool(model);
    const res = await post('/v1/chat/completions', { model, messages: [{ role: 'user', content: 'Weather?' }], tools: [weather] });
    const body = (await res.json()) as { choices: Array<{ message: { tool_calls?: unknown[] } }> };
    expectConforms('CreateChatCompletionResponse', body);
    expect(body.choices[0]?.message.tool_calls).toHaveLength(1);
    replyWithTool(model);
    const streamed = await events(
      await post('/v1/chat/completions', { model, messages: [{ role: 'user', content: 'Weather?' }], tools: [weather], stream: true }),
    );
    for (const c of streamed) expectConforms('CreateChatCompletionStreamResponse', c);
    expect(JSON.stringify(streamed)).toContain('get_weather');
  });
});

describe('/v1/embeddings and /v1/models conform', () => {
  it('embeddings, float and several inputs', async () => {
    const res = await post('/v1/embeddings', { model: 'embed', input: ['a', 'b'] });
    expect(res.status).toBe(200);
    expectConforms('CreateEmbeddingResponse', await res.json());
  });

  it('the model list and one model', async () => {
    expectConforms('ListModelsResponse', await (await fetch(`${gw.url}/v1/models`)).json());
    expectConforms('Model', await (await fetch(`${gw.url}/v1/models/gpt-chat`)).json());
  });
});

describe.each(UPSTREAMS)('/v1/responses conforms, $name upstream', ({ model }) => {
  it('the response object, with cache reads and writes in its usage', async () => {
    if (model !== 'mock-mini') replyWithCache(model);
    const res = await post('/v1/responses', { model, input: 'Hi', instructions: 'Be brief.' });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { usage: { input_tokens_details: Record<string, number> } };
    expectConforms('Response', body);
    if (model === 'gpt-chat') expect(body.usage.input_tokens_details).toEqual({ cached_tokens: 8, cache_write_tokens: 0 });
    if (model === 'claude-test') expect(body.usage.input_tokens_details).toEqual({ cached_tokens: 8, cache_write_tokens: 22 });
  });

  it('every streamed event, response.completed included', async () => {
    if (model !== 'mock-mini') replyWithCache(model);
    const all = (await events(await post('/v1/responses', { model, input: 'Hi', stream: true }))) as Array<{
      type: string;
      response?: { usage?: unknown };
    }>;
    for (const e of all) expectConforms('ResponseStreamEvent', e);
    const done = all.at(-1);
    expect(done?.type).toBe('response.completed');
    expectConforms('Response', done?.response);
    if (model === 'claude-test') expect(done?.response?.usage).toMatchObject({ input_tokens_details: { cached_tokens: 8, cache_write_tokens: 22 } });
  });
});

describe.each(SCRIPTED)('/v1/responses tool calls and cut streams conform, $name upstream', ({ model }) => {
  it('a function call, plain and streamed', async () => {
    replyWithTool(model);
    const body = await (await post('/v1/responses', { model, input: 'Weather?', tools: [weatherTool] })).json();
    expectConforms('Response', body);
    expect(JSON.stringify(body)).toContain('"function_call"');
    replyWithTool(model);
    const all = await events(await post('/v1/responses', { model, input: 'Weather?', tools: [weatherTool], stream: true }));
    for (const e of all) expectConforms('ResponseStreamEvent', e);
    expect(JSON.stringify(all)).toContain('response.function_call_arguments.done');
  });

  it('a stream cut by the upstream ends with an error event of the description', async () => {
    if (model === 'gpt-chat') openai.enqueue({ kind: 'cut', afterChunks: 2 });
    else anthropic.enqueue({ kind: 'cut', afterEvents: 3 });
    const all = (await events(await post('/v1/responses', { model, input: 'Hi', stream: true }))) as Array<{ type: string }>;
    for (const e of all) expectConforms('ResponseStreamEvent', e);
    expect(['error', 'response.failed']).toContain(all.at(-1)?.type);
  });
});

describe.each(UPSTREAMS)('stored responses conform, $name upstream', ({ model }) => {
  const get = async (path: string): Promise<unknown> => (await fetch(`${gw.url}${path}`, { headers: { authorization: `Bearer ${key}` } })).json();

  it('the stored response read back, its input items, a continued one, input_tokens', async () => {
    const first = (await (await post('/v1/responses', { model, input: 'Hi', instructions: 'Be brief.' })).json()) as { id: string };
    expectConforms('Response', await get(`/v1/responses/${first.id}`));
    const next = (await (
      await post('/v1/responses', { model, input: [{ role: 'user', content: 'Again' }], previous_response_id: first.id, stream: false })
    ).json()) as { id: string };
    expectConforms('Response', next);
    const items = await get(`/v1/responses/${next.id}/input_items?order=asc&limit=2`);
    expectConforms('ResponseItemList', items);
    expect((items as { data: unknown[]; has_more: boolean }).has_more).toBe(true);
    expectConforms('ResponseItemList', await get(`/v1/responses/${next.id}/input_items`));
    const count = await (await post('/v1/responses/input_tokens', { model, input: 'Hi', previous_response_id: next.id })).json();
    expectConforms('TokenCountsResource', count);
    const del = await fetch(`${gw.url}/v1/responses/${next.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${key}` } });
    expect(await del.json()).toEqual({ id: next.id, object: 'response', deleted: true });
    expectConforms('ErrorResponse', await get(`/v1/responses/${next.id}`));
  });
});

describe('error bodies conform (ErrorResponse)', () => {
  it.each([
    ['no key', '/v1/chat/completions', { model: 'gpt-chat', messages: [{ role: 'user', content: 'Hi' }] }, 'none', 401],
    ['a bad field', '/v1/chat/completions', { model: 'gpt-chat', messages: 'Hi' }, 'key', 400],
    ['an unknown model', '/v1/chat/completions', { model: 'nope', messages: [{ role: 'user', content: 'Hi' }] }, 'key', 404],
    ['embeddings without input', '/v1/embeddings', { model: 'embed' }, 'key', 400],
    ['an unknown previous_response_id', '/v1/responses', { model: 'gpt-chat', input: 'Hi', previous_response_id: 'resp_1' }, 'key', 400],
    ['a temperature out of range', '/v1/chat/completions', { model: 'gpt-chat', messages: [{ role: 'user', content: 'Hi' }], temperature: 3 }, 'key', 400],
    ['n on an Anthropic route', '/v1/chat/completions', { model: 'claude-test', messages: [{ role: 'user', content: 'Hi' }], n: 3 }, 'key', 400],
    ['embeddings dimensions out of range', '/v1/embeddings', { model: 'embed', input: 'x', dimensions: 1_000_000 }, 'key', 400],
  ] as const)('%s', async (_name, path, body, auth, status) => {
    const res = await post(path, body, auth === 'key' ? key : '');
    expect(res.status).toBe(status);
    expectConforms('ErrorResponse', await res.json());
  });

  it.each(['gpt-chat', 'claude-test'])('an upstream failure after every target (%s)', async (model) => {
    if (model === 'gpt-chat') openai.enqueue({ kind: 'status', status: 500 });
    else anthropic.enqueue({ kind: 'status', status: 500 });
    const res = await post('/v1/chat/completions', { model, messages: [{ role: 'user', content: 'Hi' }] });
    expect(res.status).toBe(502);
    expectConforms('ErrorResponse', await res.json());
  });

  it('an unknown path and a stored response', async () => {
    expectConforms('ErrorResponse', await (await fetch(`${gw.url}/v1/nothing`, { headers: { authorization: `Bearer ${key}` } })).json());
    expectConforms('ErrorResponse', await (await fetch(`${gw.url}/v1/responses/resp_1`, { headers: { authorization: `Bearer ${key}` } })).json());
  });
});
