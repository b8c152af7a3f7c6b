// A recording of real Azure OpenAI traffic (envoyproxy/ai-gateway's test cassette azure-chat-basic, Apache-2.0; see
// the source in the fixture) checks the fake and the gateway against reality: the fake's answers have every field
// the real one has, the gateway sends the request the real client sent (the dated URL shape, the deployment, the
// api-version), and the real answer, replayed through the gateway, reaches the openai SDK with its usage billed
// exactly (reasoning tokens are inside completion_tokens, billed as output).
import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAzureOpenAI, type FakeAzureOpenAI } from '../fakes/azure/openai.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { basics, route, secret } from '../helpers/manifests.ts';

interface Recording {
  request: { url: string; query: Record<string, string[]>; body: { model: string; messages: OpenAI.ChatCompletionMessageParam[] } };
  response: { status: number; headers: Record<string, string>; body: string };
}
const rec = JSON.parse(readFileSync(new URL('../fakes/azure/recorded/azure-chat-basic.json', import.meta.url), 'utf8')) as Recording;
const real = JSON.parse(rec.response.body) as Record<string, unknown> & { choices: Array<Record<string, unknown>>; usage: Record<string, number> };
const deployment = rec.request.body.model;
const apiVersion = rec.request.query['api-version']?.[0] ?? '';
const KEY = 'azure-recorded-test-key-2718281828';

let azure: FakeAzureOpenAI;
let gw: TestGateway;
let openai: OpenAI;

beforeAll(async () => {
  azure = await startFakeAzureOpenAI({ apiKey: KEY, deployments: { [deployment]: 'chat' } });
  const b = basics();
  gw = await startGateway([
    ...b.docs,
    secret('azure-key', { 'api-key': KEY }),
    route('gpt-5-nano', [
      {
        name: 'azure-recorded',
        provider: 'azure-openai',
        baseUrl: azure.url,
        upstreamModel: deployment,
        apiVersion,
        credentials: { secretKeyRef: { name: 'azure-key', key: 'api-key' } },
      },
    ]),
  ]);
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: b.keys.builder, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await azure?.close();
});

const keys = (o: unknown): string[] => Object.keys(o as object).sort();

describe('a recording of real Azure OpenAI traffic', () => {
  it("the fake's answer has every field of the real one, in the choice and the usage too", async () => {
    const res = await fetch(`${azure.url}/openai/deployments/${deployment}/chat/completions?api-version=${apiVersion}`, {
      method: 'POST',
      headers: { 'api-key': KEY, 'content-type': 'application/json' },
      body: JSON.stringify(rec.request.body),
    });
    const fake = (await res.json()) as typeof real;
    expect(keys(fake)).toEqual(expect.arrayContaining(keys(real)));
    expect(keys(fake.choices[0])).toEqual(expect.arrayContaining(keys(real.choices[0])));
    expect(keys(fake.choices[0]?.message)).toEqual(expect.arrayContaining(keys(real.choices[0]?.message)));
    expect(keys(fake.usage)).toEqual(expect.arrayContaining(keys(real.usage)));
    expect(keys((fake.prompt_filter_results as unknown[])[0])).toEqual(keys((real.prompt_filter_results as unknown[])[0]));
  });

  it('the gateway sends the request the real client sent, and the real answer reaches the SDK billed exactly', async () => {
    azure.calls.length = 0;
    azure.enqueue({
      kind: 'raw',
      status: rec.response.status,
      body: rec.response.body,
      contentType: rec.response.headers['content-type'] ?? 'application/json',
    });
    const done = await openai.chat.completions.create({ model: 'gpt-5-nano', messages: rec.request.body.messages });
    const sent = azure.calls[0];
    expect(`${new URL(rec.request.url).pathname}?api-version=${apiVersion}`).toBe(sent?.path);
    expect(sent?.body).toMatchObject(rec.request.body);
    expect(done.choices[0]?.message.content).toBe((real.choices[0]?.message as { content: string }).content);
    expect(done.usage).toMatchObject({ prompt_tokens: real.usage.prompt_tokens, completion_tokens: real.usage.completion_tokens });
    const e = gw.sink.events.at(-1);
    // 1.04 and 2.08 USD per million tokens (helpers/manifests.ts route()): 1040 and 2080 nano-USD per token.
    expect(e).toMatchObject({ inputTokens: 8, outputTokens: 271, costNano: 8 * 1040 + 271 * 2080 });
  });
});
