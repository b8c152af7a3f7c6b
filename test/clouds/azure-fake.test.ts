// The fake Azure OpenAI and the fake Entra ID, checked by Azure's own clients before the gateway is pointed at them:
// the openai SDK's AzureOpenAI client (the dated API, with an api-key and with an Entra ID token from
// @azure/identity's getBearerTokenProvider) and the OpenAI client on the v1 API parse its answers and streams,
// Azure's quirks included (the first stream chunk without choices, content filter results on chunks).
import tls from 'node:tls';
import { ClientSecretCredential, getBearerTokenProvider } from '@azure/identity';
import OpenAI, { AzureOpenAI } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeEntra, type FakeEntra } from '../fakes/azure/entra.ts';
import { AZURE_REPLY, FILTER_COMPLETION, FILTER_PROMPT, startFakeAzureOpenAI, type FakeAzureOpenAI } from '../fakes/azure/openai.ts';

const KEY = 'azure-fake-api-key-0123456789abcdef';
const SCOPE = 'https://cognitiveservices.azure.com/.default';
let entra: FakeEntra;
let azure: FakeAzureOpenAI;
let tokenProvider: () => Promise<string>;

beforeAll(async () => {
  entra = await startFakeEntra();
  // This worker trusts the fake's self-signed certificate (a gateway child process gets NODE_EXTRA_CA_CERTS instead).
  tls.setDefaultCACertificates([...tls.getCACertificates('default'), entra.cert]);
  entra.register({ tenant: 'tenant-1', clientId: 'client-1', secret: 'client-secret-value-1' });
  azure = await startFakeAzureOpenAI({ apiKey: KEY, entra, deployments: { 'gpt-4o-prod': 'chat', 'embed-small': 'embeddings' } });
  const credential = new ClientSecretCredential('tenant-1', 'client-1', 'client-secret-value-1', { authorityHost: entra.url, disableInstanceDiscovery: true });
  tokenProvider = getBearerTokenProvider(credential, SCOPE);
});

afterAll(async () => {
  await Promise.allSettled([azure?.close(), entra?.close()]);
});

const ask = (content: string): OpenAI.ChatCompletionCreateParamsNonStreaming => ({ model: 'gpt-4o-prod', messages: [{ role: 'user', content }] });

async function streamed(client: OpenAI, content: string): Promise<{ text: string; finish: string | null; chunks: OpenAI.ChatCompletionChunk[] }> {
  const chunks: OpenAI.ChatCompletionChunk[] = [];
  const s = await client.chat.completions.create({ ...ask(content), stream: true, stream_options: { include_usage: true } });
  for await (const c of s) chunks.push(c);
  const text = chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');
  const finish = chunks.map((c) => c.choices[0]?.finish_reason).find((f) => f) ?? null;
  return { text, finish, chunks };
}

describe('the fake Azure OpenAI, as the AzureOpenAI client sees it (dated API)', () => {
  const clients = (): Array<[string, AzureOpenAI]> => [
    ['api-key', new AzureOpenAI({ endpoint: azure.url, apiKey: KEY, apiVersion: '2024-10-21', maxRetries: 0 })],
    ['Entra ID token', new AzureOpenAI({ endpoint: azure.url, azureADTokenProvider: tokenProvider, apiVersion: '2024-10-21', maxRetries: 0 })],
  ];

  it('answers chat, plain and streamed, and embeddings, with either credential', async () => {
    for (const [, client] of clients()) {
      const before = azure.answered.dated;
      const done = await client.chat.completions.create(ask('hi'));
      expect(done.choices[0]?.message.content).toBe(AZURE_REPLY);
      expect((done as unknown as { prompt_filter_results: unknown[] }).prompt_filter_results).toHaveLength(1);
      const s = await streamed(client, 'hi');
      expect(s.text).toBe(AZURE_REPLY);
      expect(s.finish).toBe('stop');
      expect(s.chunks[0]?.choices).toEqual([]);
      expect(s.chunks.at(-1)?.usage?.completion_tokens).toBe(9);
      const emb = await client.embeddings.create({ model: 'embed-small', input: ['a', 'b'] });
      expect(emb.data.map((d) => d.embedding)).toEqual([
        [0.25, -0.5, 0.125, 0],
        [0.25, -0.5, 0.125, 1],
      ]);
      expect(azure.answered.dated - before).toBe(3);
    }
    const last = azure.calls.at(-1);
    expect(last?.path).toBe('/openai/deployments/embed-small/embeddings?api-version=2024-10-21');
    expect(String(last?.headers.authorization)).toMatch(/^Bearer fake-entra-/);
  });

  it("gives Azure's content filter answers: a 400 content_filter for the prompt, finish_reason content_filter", async () => {
    const [[, client]] = clients() as [[string, AzureOpenAI]];
    const err = await client.chat.completions.create(ask(`tell me about ${FILTER_PROMPT}`)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('content_filter');
    const done = await client.chat.completions.create(ask(FILTER_COMPLETION));
    expect(done.choices[0]?.finish_reason).toBe('content_filter');
    expect((await streamed(client, FILTER_COMPLETION)).finish).toBe('content_filter');
  });

  it('refuses what Azure refuses: a wrong key, no api-version, an unknown deployment', async () => {
    const wrong = new AzureOpenAI({ endpoint: azure.url, apiKey: 'wrong', apiVersion: '2024-10-21', maxRetries: 0 });
    expect(await wrong.chat.completions.create(ask('hi')).catch((e: unknown) => e)).toBeInstanceOf(OpenAI.AuthenticationError);
    const noVersion = await fetch(`${azure.url}/openai/deployments/gpt-4o-prod/chat/completions`, {
      method: 'POST',
      headers: { 'api-key': KEY, 'content-type': 'application/json' },
      body: JSON.stringify(ask('hi')),
    });
    expect(noVersion.status).toBe(404);
    const [[, client]] = clients() as [[string, AzureOpenAI]];
    const unknown = await client.chat.completions.create({ ...ask('hi'), model: 'nope' }).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
  });
});

describe('the fake Azure OpenAI, as the OpenAI client sees its v1 API', () => {
  const v1 = (): OpenAI => new OpenAI({ baseURL: `${azure.url}/openai/v1`, apiKey: tokenProvider, maxRetries: 0 });

  it('answers chat, plain and streamed, embeddings and responses, the deployment in model', async () => {
    const client = v1();
    const before = azure.answered.v1;
    expect((await client.chat.completions.create(ask('hi'))).choices[0]?.message.content).toBe(AZURE_REPLY);
    expect((await streamed(client, 'hi')).text).toBe(AZURE_REPLY);
    expect((await client.embeddings.create({ model: 'embed-small', input: 'a' })).data[0]?.embedding).toEqual([0.25, -0.5, 0.125, 0]);
    const r = await client.responses.create({ model: 'gpt-4o-prod', input: 'hi' });
    expect(r.output_text).toBe(AZURE_REPLY);
    let text = '';
    for await (const e of await client.responses.create({ model: 'gpt-4o-prod', input: 'hi', stream: true }))
      if (e.type === 'response.output_text.delta') text += e.delta;
    expect(text).toBe(AZURE_REPLY);
    expect(azure.answered.v1 - before).toBe(5);
    expect(azure.calls.at(-1)?.path).toBe('/openai/v1/responses');
  });

  it('refuses an api-version on the v1 path, and an expired or unknown bearer token', async () => {
    const res = await fetch(`${azure.url}/openai/v1/chat/completions?api-version=2024-10-21`, {
      method: 'POST',
      headers: { 'api-key': KEY, 'content-type': 'application/json' },
      body: JSON.stringify(ask('hi')),
    });
    expect(res.status).toBe(400);
    const forged = new OpenAI({ baseURL: `${azure.url}/openai/v1`, apiKey: 'fake-entra-forged', maxRetries: 0 });
    expect(await forged.chat.completions.create(ask('hi')).catch((e: unknown) => e)).toBeInstanceOf(OpenAI.AuthenticationError);
  });
});
