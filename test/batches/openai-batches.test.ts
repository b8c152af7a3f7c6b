// OpenAI's Batch API through the gateway, driven by the official openai SDK (files.create, batches.create, retrieve,
// cancel, list, files.content) on the built-in mock's batch API: the worst case of every line held at creation,
// each line charged at the batch price (half the listed one) once results arrive, the rest released; bad input is a
// 4xx with nothing kept or charged; another account's ids are not found; every answer validates against OpenAI's
// published OpenAPI description.
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { account, apiKey, basics, route } from '../helpers/manifests.ts';
import { expectConforms } from '../helpers/openapi.ts';
import { until } from '../helpers/until.ts';

// route(): 1.04 and 2.08 USD per million tokens, in nano-USD per token.
const IN = 1040;
const OUT = 2080;

let gw: TestGateway;
let client: OpenAI;
let other: OpenAI;
let narrow: OpenAI;
let tightKey: string;

function line(id: string, content: string, maxTokens = 16, model = 'mock-chat'): string {
  return JSON.stringify({
    custom_id: id,
    method: 'POST',
    url: '/v1/chat/completions',
    body: { model, messages: [{ role: 'user', content }], max_tokens: maxTokens },
  });
}

/** A line's hold as the per-call path computes it: its bytes bound its input, max_tokens its output. */
const holdOf = (l: string, maxTokens = 16): number => Buffer.byteLength(l) * IN + maxTokens * OUT;

const BURST = 4;
const UPLOAD_MAX = 256 * 1024;
const burstLine = line('only', 'hello there');

beforeAll(async () => {
  const b = basics();
  const others = apiKey('other-key', 'rival');
  const narrowKey = apiKey('narrow-key', 'acme', { models: ['mock-embed'] });
  const tight = apiKey('tight-key', 'acme', { monthlyBudgetUsd: ((BURST - 1) * holdOf(burstLine)) / 1e9 });
  tightKey = tight.key;
  gw = await startGateway(
    [
      ...b.docs,
      account('rival', 'builder', { credits: [{ id: 'r1', amountUsd: 5 }] }),
      ...others.docs,
      ...narrowKey.docs,
      ...tight.docs,
      route('mock-chat', [{ name: 'mock-a', provider: 'mock' }]),
      route('mock-embed', [{ name: 'mock-e', provider: 'mock' }], { type: 'embeddings' }),
      route('bedrock-only', [{ name: 'br', provider: 'bedrock', region: 'us-east-1', upstreamModel: 'amazon.nova-lite-v1:0', credentials: { ambient: {} } }]),
    ],
    { batches: { settings: { pollMs: 100, maxUploadBytes: UPLOAD_MAX } } },
  );
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: b.keys.builder, maxRetries: 0 });
  other = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: others.key, maxRetries: 0 });
  narrow = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: narrowKey.key, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
});

async function upload(c: OpenAI, text: string): Promise<OpenAI.FileObject> {
  return c.files.create({ file: await toFile(Buffer.from(text), 'input.jsonl'), purpose: 'batch' });
}

async function ended(id: string): Promise<OpenAI.Batch> {
  let b = await client.batches.retrieve(id);
  await until(async () => {
    b = await client.batches.retrieve(id);
    return ['completed', 'cancelled', 'failed', 'expired'].includes(b.status);
  }, 15_000);
  return b;
}

describe('a batch on the mock, end to end', () => {
  it('holds every line at creation, charges each at half price when results arrive, releases the rest', async () => {
    const lines = [line('a', 'one'), line('b', 'two two'), line('c', 'three three three', 8)];
    const file = await upload(client, `${lines.join('\n')}\n`);
    expectConforms('OpenAIFile', file);
    expect(file).toMatchObject({ object: 'file', purpose: 'batch', filename: 'input.jsonl' });
    expect(await client.files.retrieve(file.id)).toMatchObject({ id: file.id, bytes: file.bytes });

    const before = await gw.store.ledger('acme');
    const batch = await client.batches.create({
      input_file_id: file.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
      metadata: { job: 'eval-1' },
    });
    expectConforms('Batch', batch);
    expect(batch).toMatchObject({ object: 'batch', status: 'validating', input_file_id: file.id, metadata: { job: 'eval-1' } });
    const hold = holdOf(lines[0] as string) + holdOf(lines[1] as string) + holdOf(lines[2] as string, 8);
    expect((await gw.store.ledger('acme')).heldNano - before.heldNano).toBe(hold);

    const done = await ended(batch.id);
    expectConforms('Batch', done);
    expect(done.status).toBe('completed');
    expect(done.request_counts).toEqual({ total: 3, completed: 3, failed: 0 });
    const out = await (await client.files.content(done.output_file_id as string)).text();
    const rows = out
      .trim()
      .split('\n')
      .map((r) => JSON.parse(r) as { custom_id: string; response: { status_code: number; body: OpenAI.ChatCompletion } });
    expect(rows.map((r) => r.custom_id).sort()).toEqual(['a', 'b', 'c']);
    for (const r of rows) {
      expect(r.response.status_code).toBe(200);
      expectConforms('CreateChatCompletionResponse', r.response.body);
    }

    const events = gw.sink.events.filter((e) => e.requestedModel === 'mock-chat' && e.apiKey === 'builder-key');
    expect(events).toHaveLength(3);
    // Each line's event carries the tokens its answer reported, charged at half the listed price.
    const reported = rows.map((r) => [r.response.body.usage?.prompt_tokens ?? 0, r.response.body.usage?.completion_tokens ?? 0].join('/')).sort();
    expect(events.map((e) => `${e.inputTokens}/${e.outputTokens}`).sort()).toEqual(reported);
    let sum = 0;
    for (const e of events) {
      expect(e.inputTokens).toBeGreaterThan(0);
      expect(e.costNano).toBe(Math.floor((e.inputTokens * IN + e.outputTokens * OUT) / 2));
      expect(e.status).toBe(200);
      sum += e.costNano;
    }
    const after = await gw.store.ledger('acme');
    expect(after.spentNano - before.spentNano).toBe(sum);
    expect(after.heldNano).toBe(before.heldNano);
  });

  it('lists batches and files, newest first, with after and limit', async () => {
    const page = await client.batches.list({ limit: 1 });
    expectConforms('ListBatchesResponse', { object: 'list', data: page.data, has_more: page.has_more, first_id: page.data[0]?.id, last_id: page.data[0]?.id });
    expect(page.data).toHaveLength(1);
    const files = await client.files.list();
    expect(files.data.length).toBeGreaterThan(0);
  });

  it('cancels a batch before it ran: nothing charged, the hold released', async () => {
    const file = await upload(client, `${line('x', 'never runs')}\n`);
    const before = await gw.store.ledger('acme');
    const b = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const c = await client.batches.cancel(b.id);
    expectConforms('Batch', c);
    expect(c.status).toBe('cancelling');
    const done = await ended(b.id);
    expect(done.status).toBe('cancelled');
    const after = await gw.store.ledger('acme');
    expect(after.spentNano).toBe(before.spentNano);
    expect(after.heldNano).toBe(before.heldNano);
  });

  it(`admits exactly ${BURST - 1} of ${BURST} concurrent batches against a budget that fits ${BURST - 1}`, async () => {
    const tight = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: tightKey, maxRetries: 0 });
    const file = await upload(tight, `${burstLine}\n`);
    const results = await Promise.allSettled(
      Array.from({ length: BURST }, () => tight.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(BURST - 1);
    const refused = results.filter((r) => r.status === 'rejected');
    expect(refused).toHaveLength(1);
    expect((refused[0] as PromiseRejectedResult).reason).toMatchObject({ status: 402, code: 'budget_exceeded' });
  });
});

describe('bad input: a clear 4xx, nothing kept or charged', () => {
  it('refuses a malformed line, naming it', async () => {
    const err = await upload(client, `${line('a', 'fine')}\n{not json\n`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as Error).message).toContain('line 2');
  });

  it('refuses duplicate custom_ids, a wrong method or url, a streamed line', async () => {
    for (const text of [
      `${line('a', 'x')}\n${line('a', 'y')}\n`,
      JSON.stringify({ custom_id: 'a', method: 'GET', url: '/v1/chat/completions', body: {} }),
      JSON.stringify({ custom_id: 'a', method: 'POST', url: '/v1/images/generations', body: {} }),
      JSON.stringify({
        custom_id: 'a',
        method: 'POST',
        url: '/v1/chat/completions',
        body: { model: 'mock-chat', messages: [{ role: 'user', content: 'x' }], stream: true },
      }),
    ]) {
      await expect(upload(client, text)).rejects.toMatchObject({ status: 400 });
    }
  });

  it('refuses a line for a model the key may not use, and a model whose route does not batch', async () => {
    const before = (await client.files.list()).data.length;
    await expect(upload(narrow, `${line('a', 'x')}\n`)).rejects.toMatchObject({ status: 403, code: 'model_not_allowed' });
    await expect(upload(client, `${line('a', 'x', 16, 'bedrock-only')}\n`)).rejects.toMatchObject({ status: 400 });
    expect((await client.files.list()).data).toHaveLength(before);
  });

  it("answers 404 for another account's file and batch", async () => {
    const file = await upload(client, `${line('a', 'mine')}\n`);
    const b = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    await expect(other.files.retrieve(file.id)).rejects.toMatchObject({ status: 404 });
    await expect(other.files.content(file.id)).rejects.toMatchObject({ status: 404 });
    await expect(other.files.delete(file.id)).rejects.toMatchObject({ status: 404 });
    await expect(other.batches.retrieve(b.id)).rejects.toMatchObject({ status: 404 });
    await expect(other.batches.cancel(b.id)).rejects.toMatchObject({ status: 404 });
    await expect(other.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' })).rejects.toMatchObject({
      status: 404,
    });
  });

  it('refuses another purpose, a missing file part and a file over the upload bound (413)', async () => {
    await expect(client.files.create({ file: await toFile(Buffer.from('x'), 'a.jsonl'), purpose: 'assistants' })).rejects.toMatchObject({ status: 400 });
    const noFile = new FormData();
    noFile.append('purpose', 'batch');
    const res = await fetch(`${gw.url}/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${client.apiKey}` }, body: noFile });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain('no `file` part');
    const big = Array.from({ length: 4000 }, (_, i) => line(`l${i}`, 'x'.repeat(40))).join('\n');
    expect(Buffer.byteLength(big)).toBeGreaterThan(UPLOAD_MAX);
    await expect(upload(client, big)).rejects.toMatchObject({ status: 413 });
  });

  it('deletes a file', async () => {
    const file = await upload(client, `${line('a', 'gone')}\n`);
    const d = await client.files.delete(file.id);
    expectConforms('DeleteFileResponse', d);
    await expect(client.files.retrieve(file.id)).rejects.toMatchObject({ status: 404 });
  });
});
