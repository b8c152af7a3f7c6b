// Hostile and mistaken input on /v1/responses: each gets a 400 in the OpenAI shape naming the field, never a 5xx,
// never reaches an upstream, never costs money; CORS and the plan rules as on /v1/chat/completions.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEnv, type Env } from './setup.ts';

let env: Env;

beforeAll(async () => {
  env = await startEnv();
});

afterAll(async () => {
  await env.close();
});

async function post(
  body: unknown,
  key = env.keys.builder,
  raw = false,
): Promise<{ status: number; json: { error?: { code?: string; param?: string | null; type?: string } }; headers: Headers }> {
  const res = await fetch(`${env.gw.url}/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: raw ? String(body) : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as { error?: { code?: string } }, headers: res.headers };
}

describe('/v1/responses: bad input', () => {
  it.each([
    ['broken JSON', '{"model":', true, 'invalid_json', null],
    ['an array body', '[]', true, 'invalid_request', null],
    ['no model', { input: 'hi' }, false, 'invalid_request', 'model'],
    ['no input', { model: 'gpt-chat' }, false, 'invalid_request', 'input'],
    ['input of the wrong type', { model: 'gpt-chat', input: 5 }, false, 'invalid_request', 'input'],
    ['an input item that is not an object', { model: 'gpt-chat', input: ['hi'] }, false, 'invalid_request', 'input[0]'],
    ['tools that are not an array', { model: 'gpt-chat', input: 'hi', tools: {} }, false, 'invalid_request', 'tools'],
    ['temperature over 2', { model: 'gpt-chat', input: 'hi', temperature: 3 }, false, 'invalid_request', 'temperature'],
    ['a negative max_output_tokens', { model: 'gpt-chat', input: 'hi', max_output_tokens: -1 }, false, 'invalid_request', 'max_output_tokens'],
    [
      'a task_type over 64 characters',
      { model: 'gpt-chat', input: 'hi', metadata: { task_type: 'x'.repeat(65) } },
      false,
      'task_type_too_long',
      'metadata.task_type',
    ],
    ['content of the wrong type', { model: 'gpt-chat', input: [{ role: 'user', content: 5 }] }, false, 'invalid_request', 'input[0].content'],
    [
      'a function call without call_id',
      { model: 'claude-test', input: [{ type: 'function_call', name: 'f', arguments: '{}' }] },
      false,
      'invalid_request',
      'input[0].call_id',
    ],
    ['an unknown role', { model: 'gpt-chat', input: [{ role: 'robot', content: 'hi' }] }, false, 'invalid_request', 'input[0].role'],
    [
      'an unknown previous_response_id',
      { model: 'gpt-resp', input: 'hi', previous_response_id: 'resp_1' },
      false,
      'previous_response_not_found',
      'previous_response_id',
    ],
    ['conversation', { model: 'gpt-resp', input: 'hi', conversation: 'conv_1' }, false, 'unsupported_content', 'conversation'],
    ['an item_reference to nothing', { model: 'gpt-chat', input: [{ type: 'item_reference', id: 'msg_1' }] }, false, 'invalid_request', 'input[0]'],
  ])('%s: 400, naming the field', async (_name, body, raw, code, param) => {
    const calls = env.openai.calls.length + env.anthropic.calls.length;
    const r = await post(body, env.keys.builder, raw as boolean);
    expect(r.status).toBe(400);
    expect(r.json.error?.code).toBe(code);
    expect(r.json.error?.type).toBe('invalid_request_error');
    if (param !== null) expect(r.json.error?.param).toBe(param);
    expect(env.openai.calls.length + env.anthropic.calls.length).toBe(calls);
    expect(env.gw.sink.events.reduce((s, e) => s + e.costNano, 0)).toBe(0);
  });

  it('is open to every plan, as /v1/chat/completions, with CORS headers', async () => {
    const r = await post({ model: 'mock-mini', input: 'hi' }, env.keys.free);
    expect(r.status).toBe(200);
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    expect(r.headers.get('access-control-expose-headers')).toContain('x-svc-upstream');
  });
});
