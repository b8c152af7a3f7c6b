// Hosted built-in tools (web_search and the like, run on OpenAI's side) sent to models without a Responses upstream,
// over HTTP as a browser or an SDK sees it: by default the call is served without them and x-svc-dropped-tools
// (exposed through CORS) names them, streamed or not, on an OpenAI-format and an Anthropic-format upstream; a route
// with hostedTools: reject refuses them with 400; a tool_choice forcing one is refused on any route. A refusal
// reaches no upstream and costs nothing (/v1/me unchanged, no usage event).
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
  [openai, anthropic] = await Promise.all([startFakeUpstream('hosted-openai'), startFakeAnthropic('hosted-anthropic')]);
  const b = basics();
  key = b.keys.builder;
  gw = await startGateway([
    ...b.docs,
    route('gpt-chat', [{ name: 'chat-a', provider: 'openai', baseUrl: openai.baseUrl, upstreamModel: 'gpt-upstream' }]),
    route('claude-test', [{ name: 'anthropic-a', provider: 'anthropic', baseUrl: anthropic.baseUrl, upstreamModel: 'claude-upstream' }]),
    route('claude-strict', [{ name: 'anthropic-s', provider: 'anthropic', baseUrl: anthropic.baseUrl, upstreamModel: 'claude-upstream' }], {
      hostedTools: 'reject',
    }),
  ]);
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([openai?.close(), anthropic?.close()]);
});

const TOOLS = [
  { type: 'function', name: 'exec_command', parameters: { type: 'object', properties: { cmd: { type: 'string' } } } },
  { type: 'web_search', external_web_access: false },
  { type: 'file_search', vector_store_ids: ['vs_1'] },
];

function post(body: object): Promise<Response> {
  return fetch(`${gw.url}/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', origin: 'https://app.example' },
    body: JSON.stringify(body),
  });
}

async function balance(): Promise<unknown> {
  return ((await (await fetch(`${gw.url}/v1/me`, { headers: { authorization: `Bearer ${key}` } })).json()) as { balance_usd: unknown }).balance_usd;
}

function upstreamTools(model: string): unknown {
  const calls = model === 'gpt-chat' ? openai.calls : anthropic.calls;
  return calls.at(-1)?.body.tools;
}

describe.each([
  ['an OpenAI-format upstream', 'gpt-chat'],
  ['an Anthropic-format upstream', 'claude-test'],
])('hosted tools dropped by default, %s', (_name, model) => {
  it.each([false, true])('stream %s: served with the function tool only; the header and the usage event name what was left out', async (stream) => {
    const res = await post({ model, input: 'Run ls', tools: TOOLS, tool_choice: 'auto', stream });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-svc-dropped-tools')).toBe('web_search, file_search');
    expect(res.headers.get('access-control-expose-headers')).toContain('x-svc-dropped-tools');
    await res.text();
    const sent = JSON.stringify(upstreamTools(model));
    expect(sent).toContain('exec_command');
    expect(sent).not.toMatch(/web_search|file_search/);
    expect(gw.sink.events.at(-1)).toMatchObject({ requestedModel: model, status: 200, stream, droppedTools: ['web_search', 'file_search'] });
  });

  it('a call without hosted tools carries no header and no field', async () => {
    const res = await post({ model, input: 'Hi', tools: TOOLS.slice(0, 1) });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-svc-dropped-tools')).toBeNull();
    expect(gw.sink.events.at(-1)?.droppedTools).toBeUndefined();
  });

  it('refuses a tool_choice that forces a hosted tool, at no cost', async () => {
    const before = { balance: await balance(), events: gw.sink.events.length, calls: openai.calls.length + anthropic.calls.length };
    const res = await post({ model, input: 'Search', tools: TOOLS, tool_choice: { type: 'web_search' } });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { code: 'unsupported_content', param: 'tool_choice', message: expect.stringContaining('web_search') } });
    expect({ balance: await balance(), events: gw.sink.events.length, calls: openai.calls.length + anthropic.calls.length }).toEqual(before);
  });
});

describe('a route with hostedTools: reject', () => {
  it('refuses a hosted tool with 400 naming it, at no cost', async () => {
    const before = { balance: await balance(), events: gw.sink.events.length, calls: anthropic.calls.length };
    const res = await post({ model: 'claude-strict', input: 'Hi', tools: TOOLS });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      error: { code: 'unsupported_content', param: 'tools[1]', message: expect.stringContaining('the web_search tool has no equivalent') },
    });
    expect({ balance: await balance(), events: gw.sink.events.length, calls: anthropic.calls.length }).toEqual(before);
  });

  it('serves the same call without the hosted tools', async () => {
    const res = await post({ model: 'claude-strict', input: 'Hi', tools: TOOLS.slice(0, 1) });
    expect(res.status).toBe(200);
  });
});
