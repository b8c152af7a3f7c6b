// A large prompt through the OpenAI pass-through (spliced on the client's bytes, gateway/translate/raw-splice.ts): the
// upstream gets exactly the JSON it would get from a serialized body (the prompt intact, escapes and non-ASCII
// included, the model and output cap set, metadata left out), as a small prompt does.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SPLICE_MIN_BYTES } from '../../gateway/translate/raw-splice.ts';
import { startFakeUpstream, type FakeUpstream } from '../fakes/upstream.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { basics, route } from '../helpers/manifests.ts';

let up: FakeUpstream;
let gw: TestGateway;
const b = basics();

beforeAll(async () => {
  up = await startFakeUpstream('large-prompt');
  gw = await startGateway([...b.docs, route('gpt-big', [{ name: 'u', provider: 'openai', baseUrl: up.baseUrl, upstreamModel: 'upstream-model' }])], {
    bodyLimit: 8 * 1024 * 1024,
  });
});
afterAll(async () => {
  await gw?.close();
  await up?.close();
});

async function call(body: object): Promise<Response> {
  return fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${b.keys.builder}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

describe('a large prompt passed through', () => {
  it.each([
    ['small', 1000],
    ['just past the splice size', SPLICE_MIN_BYTES],
    ['a megabyte', 1_000_000],
  ])('%s: the upstream gets the same JSON as from a serialized body', async (_name, size) => {
    const prompt = 'Ünïcödé "quoted" \\ back\\slash\n{ [ '.repeat(Math.ceil(size / 36)).slice(0, size);
    const client = {
      model: 'gpt-big',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: prompt },
      ],
      max_tokens: 20,
      temperature: 0.5,
      metadata: { task_type: 'summarize' },
      user: 'u-1',
    };
    const r = await call(client);
    expect(r.status).toBe(200);
    const sent = up.calls.filter((c) => c.path.endsWith('/chat/completions')).at(-1)?.body;
    expect(sent).toEqual({ model: 'upstream-model', messages: client.messages, max_tokens: 20, temperature: 0.5, user: 'u-1' });
    expect(Object.keys(sent ?? {})).toEqual(['model', 'messages', 'max_tokens', 'temperature', 'user']);
  });
});
