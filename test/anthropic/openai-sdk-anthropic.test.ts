// The official openai SDK against /v1/chat/completions when an Anthropic-format upstream serves the model:
// answers, streams, tool calls (streamed arguments, several in one turn) and usage, translated both ways.
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ANTHROPIC_FAKE_REPLY } from '../fakes/anthropic-upstream.ts';
import { startEnv, UPSTREAM_SECRET, type Env } from './setup.ts';

let env: Env;
let client: OpenAI;

beforeAll(async () => {
  env = await startEnv();
  client = new OpenAI({ baseURL: `${env.gw.url}/v1`, apiKey: env.keys.builder, maxRetries: 0 });
});

afterAll(async () => {
  await env.close();
});

beforeEach(() => {
  env.anthropic.calls.length = 0;
  env.anthropic.fallback = () => ({ kind: 'reply' });
});

const tools: OpenAI.Chat.ChatCompletionTool[] = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Weather of a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  },
];

function sent(i = 0): Record<string, unknown> {
  return env.anthropic.calls[i]?.body ?? {};
}

describe('OpenAI client, Anthropic upstream', () => {
  it('answers a completion; max_tokens defaults to the route cap; the system prompt is hoisted', async () => {
    const { data, response } = await client.chat.completions
      .create({
        model: 'claude-test',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Hi' },
        ],
      })
      .withResponse();
    expect(data.object).toBe('chat.completion');
    expect(data.model).toBe('claude-test');
    expect(data.choices[0]?.message.content).toBe(ANTHROPIC_FAKE_REPLY);
    expect(data.choices[0]?.finish_reason).toBe('stop');
    expect(data.usage).toMatchObject({ prompt_tokens: 13, completion_tokens: 9, total_tokens: 22 });
    expect(response.headers.get('x-svc-upstream')).toBe('anthropic-a');
    expect(sent()).toEqual({
      model: 'claude-upstream',
      max_tokens: 4096,
      system: [{ type: 'text', text: 'Be brief.' }],
      messages: [{ role: 'user', content: 'Hi' }],
    });
    const h = env.anthropic.calls[0]?.headers ?? {};
    expect(h['x-api-key']).toBe(UPSTREAM_SECRET);
    expect(h['anthropic-version']).toBe('2023-06-01'); // the default: an OpenAI client sends none
    expect(h.authorization).toBeUndefined();
  });

  it('streams text; usage reaches the client only when asked, and is always counted', async () => {
    const stream = await client.chat.completions.create({ model: 'claude-test', messages: [{ role: 'user', content: 'Hi' }], stream: true });
    let text = '';
    for await (const c of stream) {
      expect(c.model).toBe('claude-test');
      expect(c.usage ?? null).toBeNull();
      text += c.choices[0]?.delta.content ?? '';
    }
    expect(text).toBe(ANTHROPIC_FAKE_REPLY);
    expect(env.gw.sink.events.at(-1)).toMatchObject({ endpoint: 'chat.completions', stream: true, inputTokens: 13, outputTokens: 9 });
    const withUsage = await client.chat.completions.create({
      model: 'claude-test',
      messages: [{ role: 'user', content: 'Hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const usages = [];
    for await (const c of withUsage) if (c.usage) usages.push(c.usage);
    expect(usages).toEqual([{ prompt_tokens: 13, completion_tokens: 9, total_tokens: 22, prompt_tokens_details: { cached_tokens: 0 } }]);
  });

  it('returns tool calls and sends tool results back as tool_result blocks', async () => {
    env.anthropic.enqueue({ kind: 'reply', tools: [{ id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }] });
    const first = await client.chat.completions.create({
      model: 'claude-test',
      messages: [{ role: 'user', content: 'Paris?' }],
      tools,
      tool_choice: 'required',
    });
    const msg = first.choices[0]?.message;
    expect(first.choices[0]?.finish_reason).toBe('tool_calls');
    expect(msg?.tool_calls).toEqual([{ id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }]);
    expect(sent().tool_choice).toEqual({ type: 'any' });
    expect(sent().tools).toEqual([
      { name: 'get_weather', description: 'Weather of a city', input_schema: tools[0]?.type === 'function' ? tools[0].function.parameters : null },
    ]);
    await client.chat.completions.create({
      model: 'claude-test',
      tools,
      messages: [{ role: 'user', content: 'Paris?' }, msg as OpenAI.Chat.ChatCompletionMessageParam, { role: 'tool', tool_call_id: 'toolu_1', content: '21C' }],
    });
    expect((sent(1).messages as unknown[]).slice(1)).toEqual([
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '21C' }] },
    ]);
  });

  it('streams several tool calls with their arguments in fragments', async () => {
    env.anthropic.enqueue({
      kind: 'reply',
      text: 'Both.',
      tools: [
        { id: 'toolu_a', name: 'get_weather', input: { city: 'Paris' } },
        { id: 'toolu_b', name: 'get_weather', input: { city: 'Lima' } },
      ],
    });
    const stream = client.chat.completions.stream({ model: 'claude-test', messages: [{ role: 'user', content: 'Paris and Lima?' }], tools });
    let fragments = 0;
    stream.on('tool_calls.function.arguments.delta', () => fragments++);
    const final = await stream.finalChatCompletion();
    const m = final.choices[0]?.message;
    expect(final.choices[0]?.finish_reason).toBe('tool_calls');
    expect(m?.content).toBe('Both.');
    expect(m?.tool_calls?.map((c) => (c.type === 'function' ? [c.id, c.function.name, JSON.parse(c.function.arguments) as unknown] : null))).toEqual([
      ['toolu_a', 'get_weather', { city: 'Paris' }],
      ['toolu_b', 'get_weather', { city: 'Lima' }],
    ]);
    expect(fragments).toBeGreaterThanOrEqual(4);
  });

  it('counts cache reads and writes once', async () => {
    env.anthropic.enqueue({ kind: 'reply', usage: { input_tokens: 10, cache_read_input_tokens: 500, cache_creation_input_tokens: 90, output_tokens: 4 } });
    // A prompt long enough to hold the 600 tokens reported (usage beyond what the body can carry is clamped).
    const r = await client.chat.completions.create({ model: 'claude-test', messages: [{ role: 'user', content: 'Hi'.padEnd(600, '.') }] });
    expect(r.usage).toMatchObject({ prompt_tokens: 600, completion_tokens: 4, prompt_tokens_details: { cached_tokens: 500 } });
    expect(env.gw.sink.events.at(-1)).toMatchObject({ inputTokens: 600, cacheReadTokens: 500, cacheWriteTokens: 90, outputTokens: 4 });
  });

  it('does not pass thinking blocks into the completion', async () => {
    env.anthropic.enqueue({ kind: 'reply', thinking: 'secret reasoning', text: 'Visible.' }, { kind: 'reply', thinking: 'secret reasoning', text: 'Visible.' });
    const r = await client.chat.completions.create({ model: 'claude-test', messages: [{ role: 'user', content: 'Hi' }] });
    expect(r.choices[0]?.message.content).toBe('Visible.');
    const s = await client.chat.completions.create({ model: 'claude-test', messages: [{ role: 'user', content: 'Hi' }], stream: true });
    let text = '';
    for await (const c of s) text += c.choices[0]?.delta.content ?? '';
    expect(text).toBe('Visible.');
  });

  it('refuses what an Anthropic upstream cannot take with a 400, before calling it', async () => {
    const e = (await client.chat.completions
      .create({ model: 'claude-test', n: 2, messages: [{ role: 'user', content: 'x' }] })
      .catch((x: unknown) => x)) as InstanceType<typeof OpenAI.APIError>;
    expect(e.status).toBe(400);
    expect(e.code).toBe('unsupported_content');
    expect(env.anthropic.calls).toHaveLength(0);
  });

  it('reports an Anthropic error event mid-stream as an OpenAI stream error', async () => {
    env.anthropic.fallback = () => ({ kind: 'error-event', afterEvents: 4 });
    const stream = await client.chat.completions.create({ model: 'claude-test', messages: [{ role: 'user', content: 'Hi' }], stream: true });
    const err = await (async () => {
      for await (const _c of stream) {
        /* drain */
      }
    })().catch((x: unknown) => x);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(String((err as Error).message)).toContain('Overloaded');
  });
});
