// The official openai SDK's Responses API (responses.create, responses.stream) against /v1/responses, for each
// kind of upstream: Chat Completions (translated), Responses (passed through), Anthropic (translated). Answers,
// streams, a function-tool round trip, usage events (endpoint responses), billing, errors and fallback.
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startEnv, upstreams, type Env, type Upstream } from './setup.ts';

let env: Env;
let client: OpenAI;

beforeAll(async () => {
  env = await startEnv();
  client = new OpenAI({ baseURL: `${env.gw.url}/v1`, apiKey: env.keys.builder, maxRetries: 0 });
});

afterAll(async () => {
  await env.close();
});

const tools: OpenAI.Responses.Tool[] = [
  {
    type: 'function',
    name: 'get_weather',
    description: 'Weather of a city',
    strict: false,
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
];

const PATHS = { chat: '/v1/chat/completions', responses: '/v1/responses', anthropic: '/v1/messages' };

describe.each(['chat', 'responses', 'anthropic'] as const)('responses API, %s upstream', (kind) => {
  let u: Upstream;
  beforeEach(() => {
    u = upstreams(env).find((x) => x.kind === kind) as Upstream;
    u.reset();
  });

  it('answers responses.create; usage event says responses; the x-svc headers are set', async () => {
    const { data, response } = await client.responses
      .create({ model: u.model, instructions: 'Be brief.', input: 'Hi', metadata: { task_type: 'greeting' } })
      .withResponse();
    expect(data.object).toBe('response');
    expect(data.status).toBe('completed');
    expect(data.model).toBe(u.model);
    expect(data.output_text).toBe(u.text);
    expect(data.usage?.input_tokens).toBeGreaterThan(0);
    expect(response.headers.get('x-svc-served-model')).toBe(u.model);
    expect(response.headers.get('x-svc-fallback')).toBe('false');
    expect(u.calls().map((c) => c.path)).toEqual([PATHS[kind]]);
    expect(u.calls()[0]?.body.model).toBe(kind === 'anthropic' ? 'claude-upstream' : 'gpt-upstream');
    expect(JSON.stringify(u.calls()[0]?.body)).not.toContain('task_type');
    expect(env.gw.sink.events.at(-1)).toMatchObject({ endpoint: 'responses', stream: false, status: 200, taskType: 'greeting', requestedModel: u.model });
  });

  it('streams with responses.stream: text deltas, then the final response with usage', async () => {
    const stream = client.responses.stream({ model: u.model, input: 'Hi' });
    let text = '';
    const types: string[] = [];
    stream.on('response.output_text.delta', (e) => (text += e.delta));
    stream.on('event', (e) => types.push(e.type));
    const final = await stream.finalResponse();
    expect(text).toBe(u.text);
    expect(final.output_text).toBe(u.text);
    expect(final.model).toBe(u.model);
    expect(types[0]).toBe('response.created');
    expect(types.at(-1)).toBe('response.completed');
    expect(types).toContain('response.output_item.done');
    expect(final.usage?.output_tokens).toBeGreaterThan(0);
    expect(env.gw.sink.events.at(-1)).toMatchObject({ endpoint: 'responses', stream: true, status: 200, outputTokens: final.usage?.output_tokens });
  });

  it('bills a streamed call the same as the same call unstreamed', async () => {
    const usage = { input: 40, cacheRead: 8, output: 12 };
    u.replyText('Same answer.', usage);
    // Long enough to hold the 40 tokens reported (usage beyond what the body can carry is clamped).
    const input = 'Count'.padEnd(40, '.');
    await client.responses.create({ model: u.model, input });
    const plain = env.gw.sink.events.at(-1);
    u.replyText('Same answer.', usage);
    const stream = await client.responses.create({ model: u.model, input, stream: true });
    for await (const _e of stream) {
      /* drain */
    }
    const streamed = env.gw.sink.events.at(-1);
    expect(plain).toMatchObject({ endpoint: 'responses', stream: false, inputTokens: 40, outputTokens: 12, cacheReadTokens: 8 });
    expect(streamed).toMatchObject({ endpoint: 'responses', stream: true, inputTokens: 40, outputTokens: 12, cacheReadTokens: 8 });
    expect(streamed?.costNano).toBe(plain?.costNano);
    expect(plain?.costNano).toBe(40 * 1040 + 12 * 2080);
  });

  it('returns a function call and takes its output back (one tool round trip), streamed', async () => {
    u.replyTools([{ id: 'call_w1', name: 'get_weather', input: { city: 'Paris' } }]);
    const stream = client.responses.stream({ model: u.model, input: 'Weather in Paris?', tools, tool_choice: 'required' });
    const first = await stream.finalResponse();
    const call = first.output.find((o) => o.type === 'function_call');
    expect(call).toMatchObject({ type: 'function_call', call_id: 'call_w1', name: 'get_weather' });
    expect(JSON.parse((call as OpenAI.Responses.ResponseFunctionToolCall).arguments)).toEqual({ city: 'Paris' });
    const second = await client.responses.create({
      model: u.model,
      tools,
      input: [
        { role: 'user', content: 'Weather in Paris?' },
        call as OpenAI.Responses.ResponseFunctionToolCall,
        { type: 'function_call_output', call_id: 'call_w1', output: '21C, sunny' },
      ],
    });
    expect(second.output_text).toBe(u.text);
    expect(JSON.stringify(u.calls()[1]?.body)).toContain('21C, sunny');
    if (kind === 'chat') expect(u.calls()[1]?.body.messages).toContainEqual({ role: 'tool', tool_call_id: 'call_w1', content: '21C, sunny' });
    if (kind === 'anthropic') expect(JSON.stringify(u.calls()[1]?.body.messages)).toContain('"tool_result"');
  });

  it('ends a stream cut after its first byte with an error the SDK raises, and still bills it', async () => {
    u.cut(3);
    const stream = await client.responses.create({ model: u.model, input: 'Hi', stream: true });
    const seen: string[] = [];
    await expect(
      (async () => {
        for await (const e of stream) seen.push(e.type);
      })(),
    ).rejects.toThrow();
    expect(seen[0]).toBe('response.created');
    const e = env.gw.sink.events.at(-1);
    expect(e).toMatchObject({ endpoint: 'responses', stream: true, status: 502, errorCode: 'upstream_stream_error' });
    expect((e?.inputTokens ?? 0) + (e?.outputTokens ?? 0)).toBeGreaterThan(0);
  });
});

describe('responses API: errors and refusals', () => {
  it('refuses an unknown previous_response_id with a 400 naming it, before admission', async () => {
    const before = env.gw.sink.events.length;
    const err = await client.responses.create({ model: 'gpt-chat', input: 'Hi', previous_response_id: 'resp_123' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    const e = err as InstanceType<typeof OpenAI.BadRequestError>;
    expect(e.code).toBe('previous_response_not_found');
    expect(e.param).toBe('previous_response_id');
    expect(e.message).toContain("Previous response with id 'resp_123' not found.");
    expect(env.gw.sink.events.length).toBe(before);
  });

  it('serves a translated upstream without a hosted built-in tool, naming it in x-svc-dropped-tools; passes it to a Responses upstream', async () => {
    env.anthropic.calls.length = 0;
    const { data, response } = await client.responses.create({ model: 'claude-test', input: 'Hi', tools: [{ type: 'web_search' }] }).withResponse();
    expect(data.status).toBe('completed');
    expect(response.headers.get('x-svc-dropped-tools')).toBe('web_search');
    expect(env.anthropic.calls[0]?.body.tools).toBeUndefined();
    expect(env.gw.sink.events.at(-1)).toMatchObject({ requestedModel: 'claude-test', status: 200, droppedTools: ['web_search'] });
    const forced = await client.responses
      .create({ model: 'claude-test', input: 'Hi', tools: [{ type: 'web_search_preview' }], tool_choice: { type: 'web_search_preview' } })
      .catch((e: unknown) => e);
    expect(forced).toBeInstanceOf(OpenAI.BadRequestError);
    expect((forced as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('tool_choice');
    env.openai.calls.length = 0;
    const passed = await client.responses.create({ model: 'gpt-resp', input: 'Hi', tools: [{ type: 'web_search' }] }).withResponse();
    expect(env.openai.calls[0]?.body.tools).toEqual([{ type: 'web_search' }]);
    expect(passed.response.headers.get('x-svc-dropped-tools')).toBeNull();
    expect(env.gw.sink.events.at(-1)?.droppedTools).toBeUndefined();
  });

  it('refuses background mode with a 400 naming it', async () => {
    const err = await client.responses.create({ model: 'gpt-resp', input: 'Hi', background: true }).catch((e: unknown) => e);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('background');
  });

  it('answers 401, 404 and the stored-response routes in the OpenAI shape', async () => {
    const anon = new OpenAI({ baseURL: `${env.gw.url}/v1`, apiKey: 'sk-svc-not-a-key', maxRetries: 0 });
    await expect(anon.responses.create({ model: 'gpt-chat', input: 'Hi' })).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    const missing = await client.responses.create({ model: 'nope', input: 'Hi' }).catch((e: unknown) => e);
    expect((missing as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('model_not_found');
    const stored = await client.responses.retrieve('resp_123').catch((e: unknown) => e);
    expect(stored).toBeInstanceOf(OpenAI.NotFoundError);
    expect((stored as Error).message).toContain("Response with id 'resp_123' not found.");
  });

  it('serves the built-in mock through the Chat translation', async () => {
    const r = await client.responses.create({ model: 'mock-mini', input: 'Hello' });
    expect(r.output_text).toContain('You said: Hello');
  });

  it('falls back from a Responses target to a Chat-only one, translating for the second', async () => {
    env.openai.calls.length = 0;
    env.openai.enqueue({ kind: 'status', status: 500 });
    const { data, response } = await client.responses.create({ model: 'gpt-mixed', input: 'Hi', stream: false }).withResponse();
    expect(env.openai.calls.map((c) => c.path)).toEqual(['/v1/responses', '/v1/chat/completions']);
    expect(data.output_text).toBe('Hello from the fake upstream.');
    expect(response.headers.get('x-svc-upstream')).toBe('mixed-chat');
    expect(response.headers.get('x-svc-fallback-reason')).toBe('upstream_5xx');
  });
});
