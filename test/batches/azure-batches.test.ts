// Batches on Azure OpenAI: the OpenAI Batch API (the openai SDK's files and batches) and Anthropic's Message Batches
// (@anthropic-ai/sdk, translated to Chat Completions batch lines) run on an azure-openai target, against a loopback
// Azure resource whose shapes are checked with the SDK's AzureOpenAI client first. The gateway reaches it at Azure's
// URLs (the v1 API under /openai/v1, or a dated api-version under /openai) with the resource's key from a Secret in
// `api-key`, the lines carry the deployment's name, and each answered line is charged once at the batch price.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI, { AzureOpenAI, toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIBatchUpstream, type BatchUpstream } from '../fakes/openai-batch-upstream.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { basics, route, secret, type TargetSpec } from '../helpers/manifests.ts';
import { until } from '../helpers/until.ts';

const KEY = 'azure-batch-test-key-7c6b5a4d3e2f';
const DATED = '2025-04-01-preview';
// route() prices: 1.04 and 2.08 USD per million tokens, in nano-USD per token; batches at half of it.
const IN = 1040;
const OUT = 2080;
const pricing = { inputPerMTokUsd: 1.04, outputPerMTokUsd: 2.08, batchDiscount: 0.5 };

let az: BatchUpstream;
let gw: TestGateway;
let openai: OpenAI;
let anthropic: Anthropic;

const target = (name: string, extra: Partial<TargetSpec> = {}): TargetSpec => ({
  name,
  provider: 'azure-openai',
  baseUrl: az.baseUrl,
  upstreamModel: 'gpt-4o-batch-deployment',
  credentials: { secretKeyRef: { name: 'azure-key', key: 'api-key' } },
  ...extra,
});

beforeAll(async () => {
  az = await startOpenAIBatchUpstream({ azure: { apiKey: KEY } });
  const b = basics();
  gw = await startGateway(
    [
      ...b.docs,
      secret('azure-key', { 'api-key': KEY }),
      route('gpt-az-v1', [target('az-v1')], { pricing }),
      route('gpt-az-dated', [target('az-dated', { apiVersion: DATED })], { pricing }),
    ],
    { batches: { settings: { pollMs: 100 } } },
  );
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: b.keys.builder, maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: `${gw.url}/anthropic`, apiKey: b.keys.builder, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await az?.close();
});

const line = (model: string, id: string): string =>
  JSON.stringify({
    custom_id: id,
    method: 'POST',
    url: '/v1/chat/completions',
    body: { model, messages: [{ role: 'user', content: `hi ${id}` }], max_tokens: 32 },
  });

const each = (): number => Math.floor((az.usage.prompt_tokens * IN + az.usage.completion_tokens * OUT) / 2);

describe('the fake speaks Azure OpenAI batches as the AzureOpenAI client reads them', () => {
  it('takes a file and a batch at the dated API with the key, and refuses a wrong key', async () => {
    const sdk = new AzureOpenAI({ endpoint: az.baseUrl, apiKey: KEY, apiVersion: DATED, maxRetries: 0 });
    const f = await sdk.files.create({ file: await toFile(Buffer.from(`${line('gpt-4o-batch-deployment', 'z')}\n`), 'in.jsonl'), purpose: 'batch' });
    const created = await sdk.batches.create({ input_file_id: f.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    await sdk.batches.retrieve(created.id);
    const done = await sdk.batches.retrieve(created.id);
    expect(done.status).toBe('completed');
    expect(await (await sdk.files.content(done.output_file_id as string)).text()).toContain('"custom_id":"z"');
    expect(az.requests.every((r) => r.authorized && r.apiVersion === DATED && r.path.startsWith('/openai/'))).toBe(true);
    const wrong = new AzureOpenAI({ endpoint: az.baseUrl, apiKey: 'wrong', apiVersion: DATED, maxRetries: 0 });
    await expect(wrong.batches.retrieve(created.id)).rejects.toMatchObject({ status: 401 });
  });
});

describe('the OpenAI Batch API on an azure-openai target', () => {
  it.each([
    ['gpt-az-v1', null],
    ['gpt-az-dated', DATED],
  ])(
    '%s: runs at Azure URLs with the key and the deployment name, and charges each answered line once',
    async (model, apiVersion) => {
      az.requests.length = 0;
      const file = await openai.files.create({
        file: await toFile(Buffer.from([line(model, 'a'), line(model, 'fail-b')].join('\n')), 'in.jsonl'),
        purpose: 'batch',
      });
      const before = await gw.store.ledger('acme');
      const batch = await openai.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
      await until(async () => (await openai.batches.retrieve(batch.id)).status === 'completed', 15_000, 'completed');
      const done = await openai.batches.retrieve(batch.id);
      expect(done.request_counts).toEqual({ total: 2, completed: 1, failed: 1 });
      const out = (await (await openai.files.content(done.output_file_id as string)).text()).trim().split('\n');
      expect(out).toHaveLength(1);
      expect(JSON.parse(out[0] as string)).toMatchObject({ custom_id: 'a', response: { status_code: 200, body: { model } } });

      // Azure's URLs and credential, every call; the lines carry the deployment's name.
      expect(az.requests.length).toBeGreaterThanOrEqual(3);
      for (const r of az.requests) {
        expect(r.authorized).toBe(true);
        expect(r.apiVersion).toBe(apiVersion);
        expect(r.path.startsWith(apiVersion ? '/openai/' : '/openai/v1/')).toBe(true);
      }
      expect(([...az.uploads.values()].at(-1) ?? []).map((l) => l.body.model)).toEqual(['gpt-4o-batch-deployment', 'gpt-4o-batch-deployment']);

      const events = gw.sink.events.filter((e) => e.requestedModel === model);
      expect(events.map((e) => [e.status, e.costNano]).sort()).toEqual([
        [200, each()],
        [400, 0],
      ]);
      const after = await gw.store.ledger('acme');
      expect(after.spentNano - before.spentNano).toBe(each());
      expect(after.heldNano).toBe(before.heldNano);
    },
    30_000,
  );
});

describe("Anthropic's Message Batches on an azure-openai target", () => {
  it('runs as Chat Completions batch lines at Azure and answers in Anthropic shapes, each request charged once', async () => {
    az.requests.length = 0;
    const before = await gw.store.ledger('acme');
    const params = (content: string): Anthropic.Messages.MessageCreateParamsNonStreaming => ({
      model: 'gpt-az-v1',
      max_tokens: 16,
      messages: [{ role: 'user', content }],
    });
    const batch = await anthropic.messages.batches.create({
      requests: [
        { custom_id: 'm-1', params: params('first') },
        { custom_id: 'm-2', params: params('second') },
      ],
    });
    await until(async () => (await anthropic.messages.batches.retrieve(batch.id)).processing_status === 'ended', 15_000, 'ended');
    const done = await anthropic.messages.batches.retrieve(batch.id);
    expect(done.request_counts).toMatchObject({ succeeded: 2, errored: 0 });
    const results: Anthropic.Messages.MessageBatchIndividualResponse[] = [];
    for await (const r of await anthropic.messages.batches.results(batch.id)) results.push(r);
    expect(results.map((r) => r.custom_id).sort()).toEqual(['m-1', 'm-2']);
    for (const r of results) {
      expect(r.result.type).toBe('succeeded');
      if (r.result.type === 'succeeded') expect(r.result.message.content).toMatchObject([{ type: 'text', text: 'ok' }]);
    }
    expect(az.requests.every((r) => r.authorized && r.path.startsWith('/openai/v1/'))).toBe(true);
    const sent = [...az.uploads.values()].at(-1) ?? [];
    expect(sent.map((l) => l.body.model)).toEqual(['gpt-4o-batch-deployment', 'gpt-4o-batch-deployment']);
    const after = await gw.store.ledger('acme');
    expect(after.spentNano - before.spentNano).toBe(2 * each());
    expect(after.heldNano).toBe(before.heldNano);
  }, 30_000);
});
