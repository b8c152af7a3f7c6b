// The OpenAI Agents SDK (@openai/agents) with its default settings (the Responses API) against the gateway: an
// agent with one function tool makes one full tool round trip (call, local execution, output sent back, answer),
// unstreamed and streamed, for each kind of upstream; with a hosted tool (web search) beside it, which the
// translated upstreams cannot run, the same round trip works without it; and a multi-turn conversation chained by
// previous_response_id (the SDK sends each turn's new items only; the gateway rebuilds the rest).
import { Agent, run, setDefaultOpenAIClient, setTracingDisabled, tool, webSearchTool } from '@openai/agents';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startEnv, upstreams, type Env, type Upstream } from './setup.ts';

let env: Env;

beforeAll(async () => {
  env = await startEnv();
  setTracingDisabled(true); // traces would go to OpenAI; nothing leaves the machine
  // The Agents SDK pins its own copy of the openai package; the client is the same class at run time.
  const client = new OpenAI({ baseURL: `${env.gw.url}/v1`, apiKey: env.keys.builder, maxRetries: 0 });
  setDefaultOpenAIClient(client as unknown as Parameters<typeof setDefaultOpenAIClient>[0]);
});

afterAll(async () => {
  await env.close();
});

function weatherAgent(model: string, seen: string[], hosted = false): Agent {
  const getWeather = tool({
    name: 'get_weather',
    description: 'The weather of a city',
    parameters: z.object({ city: z.string() }),
    execute: ({ city }) => {
      seen.push(city);
      return `21C and sunny in ${city}`;
    },
  });
  return new Agent({ name: 'Weather', instructions: 'Answer with the tool.', model, tools: hosted ? [getWeather, webSearchTool()] : [getWeather] });
}

describe.each(['chat', 'responses', 'anthropic'] as const)('Agents SDK, %s upstream', (kind) => {
  let u: Upstream;
  beforeEach(() => {
    u = upstreams(env).find((x) => x.kind === kind) as Upstream;
    u.reset();
  });

  it('makes one tool round trip', async () => {
    u.replyTools([{ id: 'call_agent_1', name: 'get_weather', input: { city: 'Lyon' } }]);
    const seen: string[] = [];
    const result = await run(weatherAgent(u.model, seen), 'What is the weather in Lyon?');
    expect(seen).toEqual(['Lyon']);
    expect(result.finalOutput).toBe(u.text);
    const calls = u.calls();
    expect(calls).toHaveLength(2);
    expect(JSON.stringify(calls[1]?.body)).toContain('21C and sunny in Lyon');
    expect(env.gw.sink.events.slice(-2).map((e) => [e.endpoint, e.status])).toEqual([
      ['responses', 200],
      ['responses', 200],
    ]);
  });

  it('makes one tool round trip, streamed', async () => {
    u.replyTools([{ id: 'call_agent_2', name: 'get_weather', input: { city: 'Oslo' } }]);
    const seen: string[] = [];
    const stream = await run(weatherAgent(u.model, seen), 'What is the weather in Oslo?', { stream: true });
    let text = '';
    for await (const chunk of stream.toTextStream()) text += chunk;
    await stream.completed;
    expect(seen).toEqual(['Oslo']);
    expect(text).toBe(u.text);
    expect(stream.finalOutput).toBe(u.text);
    expect(env.gw.sink.events.slice(-2).map((e) => [e.endpoint, e.stream, e.status])).toEqual([
      ['responses', true, 200],
      ['responses', true, 200],
    ]);
  });

  it('runs a multi-turn conversation with previous_response_id: the gateway keeps the turns, tool round trips included', async () => {
    const seen: string[] = [];
    const agent = weatherAgent(u.model, seen);
    const r1 = await run(agent, 'My name is Ada.');
    expect(r1.lastResponseId).toMatch(/^resp_svc/);
    // Turn 2 sends only its own input; the upstream gets turn 1 too.
    const r2 = await run(agent, 'What is my name?', { previousResponseId: r1.lastResponseId });
    expect(r2.finalOutput).toBe(u.text);
    const turn2 = JSON.stringify(u.calls().at(-1)?.body);
    // Once each: the SDK sent turn 2 alone, and the gateway added turn 1 (not twice).
    expect(turn2.split('My name is Ada.')).toHaveLength(2);
    expect(turn2.split('What is my name?')).toHaveLength(2);
    // Turn 3, streamed, with a tool round trip: the call and its output are chained by id too.
    u.replyTools([{ id: 'call_agent_4', name: 'get_weather', input: { city: 'Turin' } }]);
    const r3 = await run(agent, 'And the weather in Turin?', { previousResponseId: r2.lastResponseId, stream: true });
    let text = '';
    for await (const chunk of r3.toTextStream()) text += chunk;
    await r3.completed;
    expect(seen).toEqual(['Turin']);
    expect(text).toBe(u.text);
    const last = u.calls().at(-1)?.body;
    const sent = JSON.stringify(last);
    for (const said of ['My name is Ada.', 'What is my name?', 'And the weather in Turin?', '21C and sunny in Turin']) expect(sent.split(said)).toHaveLength(2);
    expect(sent).not.toContain('previous_response_id');
    expect(env.gw.sink.events.slice(-4).map((e) => e.status)).toEqual([200, 200, 200, 200]);
  });

  it('makes one tool round trip with the hosted web search tool beside the function (left out where it cannot run)', async () => {
    u.replyTools([{ id: 'call_agent_3', name: 'get_weather', input: { city: 'Rome' } }]);
    const seen: string[] = [];
    const result = await run(weatherAgent(u.model, seen, true), 'What is the weather in Rome?');
    expect(seen).toEqual(['Rome']);
    expect(result.finalOutput).toBe(u.text);
    const sent = JSON.stringify(u.calls()[0]?.body.tools);
    expect(sent).toContain('get_weather');
    const dropped = kind === 'responses' ? undefined : ['web_search'];
    expect(sent.includes('web_search')).toBe(kind === 'responses');
    expect(env.gw.sink.events.slice(-2).map((e) => [e.status, e.droppedTools])).toEqual([
      [200, dropped],
      [200, dropped],
    ]);
  });
});
