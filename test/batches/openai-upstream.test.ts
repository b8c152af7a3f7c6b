// Batches sent to an OpenAI upstream's Batch API (a loopback fake of it, its shapes checked with the openai SDK
// first): the lines uploaded with the target's upstream model, the batch created and polled, its output and error
// files downloaded; each answered line charged at the batch price from the usage it reports, the failed line nothing.
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIBatchUpstream, type BatchUpstream } from '../fakes/openai-batch-upstream.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { basics, route } from '../helpers/manifests.ts';
import { expectConforms } from '../helpers/openapi.ts';
import { until } from '../helpers/until.ts';

const IN = 1040;
const OUT = 2080;

let up: BatchUpstream;
let gw: TestGateway;
let client: OpenAI;

const line = (id: string): string =>
  JSON.stringify({
    custom_id: id,
    method: 'POST',
    url: '/v1/chat/completions',
    body: { model: 'gpt-batch', messages: [{ role: 'user', content: `hi ${id}` }], max_tokens: 32 },
  });

beforeAll(async () => {
  up = await startOpenAIBatchUpstream();
  const b = basics();
  gw = await startGateway(
    [
      ...b.docs,
      route(
        'gpt-batch',
        [
          { name: 'bedrock-first', provider: 'bedrock', region: 'us-east-1', upstreamModel: 'amazon.nova-lite-v1:0', credentials: { ambient: {} } },
          { name: 'openai-a', provider: 'openai', baseUrl: up.baseUrl, upstreamModel: 'gpt-4o-mini-2024-07-18' },
        ],
        { pricing: { inputPerMTokUsd: 1.04, outputPerMTokUsd: 2.08, batchDiscount: 0.5 } },
      ),
    ],
    { batches: { settings: { pollMs: 100 } } },
  );
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: b.keys.builder, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await up?.close();
});

describe('the fake speaks the Batch API as the openai SDK reads it', () => {
  it('takes a file and a batch, and completes it', async () => {
    const sdk = new OpenAI({ baseURL: up.baseUrl, apiKey: 'sk-test', maxRetries: 0 });
    const f = await sdk.files.create({ file: await toFile(Buffer.from(`${line('z')}\n`), 'in.jsonl'), purpose: 'batch' });
    expectConforms('OpenAIFile', f);
    const b = await sdk.batches.create({ input_file_id: f.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    expectConforms('Batch', b);
    await sdk.batches.retrieve(b.id);
    const done = await sdk.batches.retrieve(b.id);
    expect(done.status).toBe('completed');
    expect(await (await sdk.files.content(done.output_file_id as string)).text()).toContain('"custom_id":"z"');
  });
});

describe('a batch on an OpenAI upstream', () => {
  it('runs on the first target that batches, charges the answered lines at half price and nothing for the failed one', async () => {
    const file = await client.files.create({
      file: await toFile(Buffer.from([line('a'), line('b'), line('fail-c')].join('\n')), 'in.jsonl'),
      purpose: 'batch',
    });
    const before = await gw.store.ledger('acme');
    const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    await until(async () => (await client.batches.retrieve(batch.id)).status === 'completed', 15_000, 'completed');
    const done = await client.batches.retrieve(batch.id);
    expectConforms('Batch', done);
    expect(done.request_counts).toEqual({ total: 3, completed: 2, failed: 1 });

    // Upstream got the lines with its own model name.
    const sent = [...up.uploads.values()].at(-1) ?? [];
    expect(sent.map((l) => l.body.model)).toEqual(['gpt-4o-mini-2024-07-18', 'gpt-4o-mini-2024-07-18', 'gpt-4o-mini-2024-07-18']);

    const out = (await (await client.files.content(done.output_file_id as string)).text()).trim().split('\n');
    expect(out).toHaveLength(2);
    for (const l of out) expect((JSON.parse(l) as { response: { body: { model: string } } }).response.body.model).toBe('gpt-batch');
    const errors = (await (await client.files.content(done.error_file_id as string)).text()).trim().split('\n');
    expect(errors).toHaveLength(1);
    expect(JSON.parse(errors[0] as string)).toMatchObject({ custom_id: 'fail-c', response: { status_code: 400 } });

    const each = Math.floor((up.usage.prompt_tokens * IN + up.usage.completion_tokens * OUT) / 2);
    const events = gw.sink.events.filter((e) => e.requestedModel === 'gpt-batch');
    expect(events).toHaveLength(3);
    expect(events.filter((e) => e.status === 200).map((e) => e.costNano)).toEqual([each, each]);
    expect(events.filter((e) => e.status === 200).every((e) => e.upstream === 'openai-a')).toBe(true);
    expect(events.find((e) => e.status === 400)?.costNano).toBe(0);
    const after = await gw.store.ledger('acme');
    expect(after.spentNano - before.spentNano).toBe(2 * each);
    expect(after.heldNano).toBe(before.heldNano);
  }, 30_000);
});
