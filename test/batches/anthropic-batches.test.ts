// Anthropic's Message Batches through the gateway, driven by the official @anthropic-ai/sdk
// (messages.batches.create, retrieve, list, cancel, results, delete): on the built-in mock (its lines translated to
// Chat Completions and back), on an Anthropic upstream's own batch API (a loopback fake, its shapes checked with the
// SDK first) and on an OpenAI upstream's Batch API. The worst case of every request held at creation, each charged
// at the batch price (half the listed one) once results arrive, the rest released; bad input is an Anthropic-shaped
// 4xx with nothing held or kept; another account's ids are not found.
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAnthropicBatchUpstream, type FakeAnthropicBatches } from '../fakes/anthropic-batch-upstream.ts';
import { startOpenAIBatchUpstream, type BatchUpstream as FakeOpenAIBatches } from '../fakes/openai-batch-upstream.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { account, apiKey, basics, route, secret } from '../helpers/manifests.ts';
import { until } from '../helpers/until.ts';

// route(): 1.04 and 2.08 USD per million tokens, in nano-USD per token.
const IN = 1040;
const OUT = 2080;
const UPSTREAM_KEY = 'sk-ant-upstream-test';

type Params = Anthropic.Messages.MessageCreateParamsNonStreaming;
type Req = { custom_id: string; params: Params };

let gw: TestGateway;
let fake: FakeAnthropicBatches;
let openaiFake: FakeOpenAIBatches;
let client: Anthropic;
let other: Anthropic;
let narrow: Anthropic;
let free: Anthropic;
let tightKey: string;

function req(id: string, content: string, model = 'mock-chat', maxTokens = 16): Req {
  return { custom_id: id, params: { model, max_tokens: maxTokens, messages: [{ role: 'user', content }] } };
}

/** A request's hold as the per-call path computes it: its params' bytes bound its input, max_tokens its output. */
const holdOf = (r: Req): number => Buffer.byteLength(JSON.stringify(r.params)) * IN + r.params.max_tokens * OUT;

const BURST = 4;
const UPLOAD_MAX = 256 * 1024;
const burstReq = req('only', 'hello there');

const sdk = (key: string): Anthropic => new Anthropic({ baseURL: `${gw.url}/anthropic`, apiKey: key, maxRetries: 0 });

beforeAll(async () => {
  fake = await startAnthropicBatchUpstream(UPSTREAM_KEY);
  openaiFake = await startOpenAIBatchUpstream();
  const b = basics();
  const others = apiKey('other-key', 'rival');
  const narrowKey = apiKey('narrow-key', 'acme', { models: ['claude-batch'] });
  const tight = apiKey('tight-key', 'acme', { monthlyBudgetUsd: ((BURST - 1) * holdOf(burstReq)) / 1e9 });
  tightKey = tight.key;
  gw = await startGateway(
    [
      ...b.docs,
      account('rival', 'builder', { credits: [{ id: 'r1', amountUsd: 5 }] }),
      ...others.docs,
      ...narrowKey.docs,
      ...tight.docs,
      secret('anthropic-upstream', { key: UPSTREAM_KEY }),
      route('mock-chat', [{ name: 'mock-a', provider: 'mock' }]),
      route('claude-batch', [
        {
          name: 'anthropic-a',
          provider: 'anthropic',
          baseUrl: fake.baseUrl,
          upstreamModel: 'claude-up-1',
          credentials: { secretKeyRef: { name: 'anthropic-upstream', key: 'key' } },
        },
      ]),
      route('gpt-batch', [{ name: 'openai-a', provider: 'openai', baseUrl: openaiFake.baseUrl, upstreamModel: 'gpt-4o-mini-2024-07-18' }]),
      route('bedrock-only', [{ name: 'br', provider: 'bedrock', region: 'us-east-1', upstreamModel: 'amazon.nova-lite-v1:0', credentials: { ambient: {} } }]),
    ],
    { batches: { settings: { pollMs: 100, maxUploadBytes: UPLOAD_MAX } } },
  );
  client = sdk(b.keys.builder);
  free = sdk(b.keys.free);
  other = sdk(others.key);
  narrow = sdk(narrowKey.key);
});

afterAll(async () => {
  await gw?.close();
  await fake?.close();
  await openaiFake?.close();
});

async function ended(c: Anthropic, id: string): Promise<Anthropic.Messages.MessageBatch> {
  let b = await c.messages.batches.retrieve(id);
  await until(async () => {
    b = await c.messages.batches.retrieve(id);
    return b.processing_status === 'ended';
  }, 15_000);
  return b;
}

async function results(c: Anthropic, id: string): Promise<Anthropic.Messages.MessageBatchIndividualResponse[]> {
  const out: Anthropic.Messages.MessageBatchIndividualResponse[] = [];
  for await (const r of await c.messages.batches.results(id)) out.push(r);
  return out.sort((a, b) => a.custom_id.localeCompare(b.custom_id));
}

describe('the fake speaks the Message Batches API as @anthropic-ai/sdk reads it', () => {
  it('creates, polls to the end and streams the results', async () => {
    const direct = new Anthropic({ baseURL: fake.baseUrl, apiKey: UPSTREAM_KEY, maxRetries: 0 });
    const b = await direct.messages.batches.create({ requests: [req('z', 'hi', 'claude-up-1'), req('fail-1', 'x', 'claude-up-1')] });
    expect(b).toMatchObject({ type: 'message_batch', processing_status: 'in_progress', results_url: null });
    const done = await ended(direct, b.id);
    expect(done.request_counts).toEqual({ processing: 0, succeeded: 1, errored: 1, canceled: 0, expired: 0 });
    const rows = await results(direct, b.id);
    expect(rows.map((r) => r.result.type)).toEqual(['errored', 'succeeded']);
    await expect(new Anthropic({ baseURL: fake.baseUrl, apiKey: 'wrong', maxRetries: 0 }).messages.batches.retrieve(b.id)).rejects.toMatchObject({
      status: 401,
    });
  });
});

describe('a Message Batch on the mock, end to end', () => {
  it('holds every request at creation, charges each at half price when results arrive, releases the rest', async () => {
    const requests = [req('a', 'one'), req('b', 'two two'), req('c', 'three three three', 'mock-chat', 8)];
    const before = await gw.store.ledger('acme');
    const batch = await client.messages.batches.create({ requests });
    expect(batch).toMatchObject({
      type: 'message_batch',
      processing_status: 'in_progress',
      request_counts: { processing: 3, succeeded: 0, errored: 0, canceled: 0, expired: 0 },
      results_url: null,
      ended_at: null,
      archived_at: null,
      cancel_initiated_at: null,
    });
    expect(batch.id).toMatch(/^msgbatch_/);
    expect(Date.parse(batch.expires_at) - Date.parse(batch.created_at)).toBe(86_400_000);
    const hold = requests.reduce((n, r) => n + holdOf(r), 0);
    expect((await gw.store.ledger('acme')).heldNano - before.heldNano).toBe(hold);
    await expect(client.messages.batches.results(batch.id)).rejects.toThrow(/results_url/);

    const done = await ended(client, batch.id);
    expect(done.request_counts).toEqual({ processing: 0, succeeded: 3, errored: 0, canceled: 0, expired: 0 });
    expect(done.results_url).toBe(`${gw.url}/anthropic/v1/messages/batches/${batch.id}/results`);
    expect(done.ended_at).not.toBeNull();
    const rows = await results(client, batch.id);
    expect(rows.map((r) => r.custom_id)).toEqual(['a', 'b', 'c']);
    const events = gw.sink.events.filter((e) => e.endpoint === 'messages' && e.requestedModel === 'mock-chat' && e.apiKey === 'builder-key');
    expect(events).toHaveLength(3);
    for (const r of rows) {
      if (r.result.type !== 'succeeded') throw new Error(`line ${r.custom_id} is ${r.result.type}`);
      expect(r.result.message).toMatchObject({ type: 'message', role: 'assistant', model: 'mock-chat' });
      expect(r.result.message.content[0]?.type).toBe('text');
    }
    // Each request's event carries the tokens its answer reported, charged at half the listed price.
    const reported = rows
      .map((r) => (r.result.type === 'succeeded' ? `${r.result.message.usage.input_tokens}/${r.result.message.usage.output_tokens}` : ''))
      .sort();
    expect(events.map((e) => `${e.inputTokens}/${e.outputTokens}`).sort()).toEqual(reported);
    let sum = 0;
    for (const e of events) {
      expect(e.inputTokens).toBeGreaterThan(0);
      expect(e.costNano).toBe(Math.floor((e.inputTokens * IN + e.outputTokens * OUT) / 2));
      sum += e.costNano;
    }
    const after = await gw.store.ledger('acme');
    expect(after.spentNano - before.spentNano).toBe(sum);
    expect(after.heldNano).toBe(before.heldNano);

    // Deleted once ended: not found any more, its results gone.
    await expect(client.messages.batches.delete(batch.id)).resolves.toEqual({ id: batch.id, type: 'message_batch_deleted' });
    await expect(client.messages.batches.retrieve(batch.id)).rejects.toMatchObject({ status: 404 });
    const res = await fetch(`${gw.url}/anthropic/v1/messages/batches/${batch.id}/results`, { headers: { 'x-api-key': client.apiKey ?? '' } });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
  });

  it('lists batches newest first with limit, after_id and before_id, and auto-paginates', async () => {
    const made: string[] = [];
    for (const w of ['p1', 'p2', 'p3']) made.push((await client.messages.batches.create({ requests: [req(w, w)] })).id);
    const first = await client.messages.batches.list({ limit: 2 });
    expect(first.data.map((b) => b.id)).toEqual([made[2], made[1]]);
    expect(first.has_more).toBe(true);
    expect(first.first_id).toBe(made[2]);
    expect(first.last_id).toBe(made[1]);
    const next = await client.messages.batches.list({ limit: 1, after_id: made[1] });
    expect(next.data.map((b) => b.id)).toEqual([made[0]]);
    const back = await client.messages.batches.list({ limit: 5, before_id: made[0] });
    expect(back.data.map((b) => b.id)).toEqual([made[2], made[1]]);
    const all: string[] = [];
    for await (const b of client.messages.batches.list({ limit: 1 })) all.push(b.id);
    expect(all.slice(0, 3)).toEqual([made[2], made[1], made[0]]);
    // Another account sees none of them; OpenAI's /v1/batches does not list them either.
    expect((await other.messages.batches.list()).data).toHaveLength(0);
    const openaiList = (await (await fetch(`${gw.url}/v1/batches`, { headers: { authorization: `Bearer ${client.apiKey}` } })).json()) as { data: unknown[] };
    expect(openaiList.data).toHaveLength(0);
    for (const id of made) await ended(client, id);
  });

  it('cancels a batch before it ran: every request canceled, nothing charged, the hold released', async () => {
    const before = await gw.store.ledger('acme');
    const b = await client.messages.batches.create({ requests: [req('x', 'never runs'), req('y', 'nor this')] });
    await expect(client.messages.batches.delete(b.id)).rejects.toMatchObject({ status: 400 });
    const c = await client.messages.batches.cancel(b.id);
    expect(c.processing_status).toBe('canceling');
    expect(c.cancel_initiated_at).not.toBeNull();
    const done = await ended(client, b.id);
    expect(done.request_counts).toEqual({ processing: 0, succeeded: 0, errored: 0, canceled: 2, expired: 0 });
    expect((await results(client, b.id)).map((r) => r.result)).toEqual([{ type: 'canceled' }, { type: 'canceled' }]);
    const after = await gw.store.ledger('acme');
    expect(after.spentNano).toBe(before.spentNano);
    expect(after.heldNano).toBe(before.heldNano);
  });

  it(`admits exactly ${BURST - 1} of ${BURST} concurrent batches against a budget that fits ${BURST - 1}`, async () => {
    const tight = sdk(tightKey);
    const before = await gw.store.ledger('acme');
    const settled = await Promise.allSettled(Array.from({ length: BURST }, () => tight.messages.batches.create({ requests: [burstReq] })));
    expect(settled.filter((r) => r.status === 'fulfilled')).toHaveLength(BURST - 1);
    const refused = settled.filter((r) => r.status === 'rejected');
    expect(refused).toHaveLength(1);
    const err = (refused[0] as PromiseRejectedResult).reason as InstanceType<typeof Anthropic.APIError>;
    expect(err.status).toBe(402);
    expect(err.error).toMatchObject({ type: 'error', error: { type: 'billing_error' } });
    const ids = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value.id] : []));
    for (const id of ids) await ended(tight, id);
    const after = await gw.store.ledger('acme');
    expect(after.heldNano).toBe(before.heldNano);
    // The refused one kept nothing: one line charged per admitted batch.
    expect(gw.sink.events.filter((e) => e.apiKey === 'tight-key')).toHaveLength(BURST - 1);
  });
});

describe('a Message Batch on an Anthropic upstream', () => {
  it("runs on the upstream's own batch API with its model, charges what each request reported", async () => {
    const requests = [req('ok-1', 'first', 'claude-batch'), req('ok-2', 'second', 'claude-batch'), req('fail-3', 'third', 'claude-batch')];
    const before = await gw.store.ledger('acme');
    const batch = await client.messages.batches.create({ requests });
    const done = await ended(client, batch.id);
    expect(done.request_counts).toEqual({ processing: 0, succeeded: 2, errored: 1, canceled: 0, expired: 0 });
    const sent = [...fake.created.values()].find((rs) => rs.some((r) => r.custom_id === 'ok-1'));
    expect(sent?.map((r) => r.params.model)).toEqual(['claude-up-1', 'claude-up-1', 'claude-up-1']);
    const rows = await results(client, batch.id);
    expect(rows[0]).toEqual({
      custom_id: 'fail-3',
      result: { type: 'errored', error: { type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens: too large' }, request_id: null } },
    });
    expect(rows[1]?.result).toMatchObject({ type: 'succeeded', message: { model: 'claude-batch', content: [{ type: 'text', text: 'answer to ok-1' }] } });
    const cost = Math.floor((fake.usage.input_tokens * IN + fake.usage.output_tokens * OUT) / 2);
    const events = gw.sink.events.filter((e) => e.requestedModel === 'claude-batch' && e.apiKey === 'builder-key');
    expect(events.map((e) => [e.status, e.costNano]).sort()).toEqual([
      [200, cost],
      [200, cost],
      [400, 0],
    ]);
    const after = await gw.store.ledger('acme');
    expect(after.spentNano - before.spentNano).toBe(2 * cost);
    expect(after.heldNano).toBe(before.heldNano);
  });

  it('cancels upstream: the canceled requests pay nothing', async () => {
    fake.mode.stuck = true;
    try {
      const before = await gw.store.ledger('acme');
      const batch = await client.messages.batches.create({ requests: [req('c-1', 'x', 'claude-batch')] });
      await until(async () => [...fake.created.values()].some((rs) => rs.some((r) => r.custom_id === 'c-1')), 10_000, 'submitted');
      await client.messages.batches.cancel(batch.id);
      await until(async () => fake.cancels.length > 0, 10_000, 'cancel sent upstream');
      fake.mode.stuck = false;
      const done = await ended(client, batch.id);
      expect(done.request_counts.canceled).toBe(1);
      const after = await gw.store.ledger('acme');
      expect(after.spentNano).toBe(before.spentNano);
      expect(after.heldNano).toBe(before.heldNano);
    } finally {
      fake.mode.stuck = false;
    }
  });
});

describe('a Message Batch on an OpenAI upstream', () => {
  it('runs as a Chat Completions batch, its answers read back as Messages', async () => {
    const before = await gw.store.ledger('acme');
    const batch = await client.messages.batches.create({ requests: [req('g-1', 'hello', 'gpt-batch', 32), req('fail-g', 'bad', 'gpt-batch', 32)] });
    const done = await ended(client, batch.id);
    expect(done.request_counts).toEqual({ processing: 0, succeeded: 1, errored: 1, canceled: 0, expired: 0 });
    const upload = [...openaiFake.uploads.values()].find((ls) => ls.some((l) => l.custom_id === 'g-1'));
    expect(upload?.[0]?.body).toMatchObject({ model: 'gpt-4o-mini-2024-07-18', max_completion_tokens: 32, messages: [{ role: 'user', content: 'hello' }] });
    const rows = await results(client, batch.id);
    expect(rows[0]?.result).toMatchObject({ type: 'errored', error: { type: 'error', error: { type: 'invalid_request_error' } } });
    const ok = rows[1]?.result;
    if (ok?.type !== 'succeeded') throw new Error('g-1 did not succeed');
    expect(ok.message).toMatchObject({ type: 'message', role: 'assistant', model: 'gpt-batch' });
    expect(ok.message.usage).toMatchObject({ input_tokens: openaiFake.usage.prompt_tokens, output_tokens: openaiFake.usage.completion_tokens });
    const cost = Math.floor((openaiFake.usage.prompt_tokens * IN + openaiFake.usage.completion_tokens * OUT) / 2);
    const after = await gw.store.ledger('acme');
    expect(after.spentNano - before.spentNano).toBe(cost);
    expect(after.heldNano).toBe(before.heldNano);
  });
});

describe('bad input: a clear Anthropic-shaped 4xx, nothing held or kept', () => {
  async function refused(c: Anthropic, body: unknown, status: number, type: string, says?: string): Promise<void> {
    const before = await gw.store.ledger('acme');
    const listed = (await client.messages.batches.list({ limit: 1000 })).data.length;
    const err = (await c.messages.batches.create(body as Anthropic.Messages.BatchCreateParams).catch((e: unknown) => e)) as InstanceType<
      typeof Anthropic.APIError
    >;
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect(err.status).toBe(status);
    expect(err.error).toMatchObject({ type: 'error', error: { type } });
    if (says) expect(err.message).toContain(says);
    const after = await gw.store.ledger('acme');
    expect(after.heldNano).toBe(before.heldNano);
    expect(after.spentNano).toBe(before.spentNano);
    expect((await client.messages.batches.list({ limit: 1000 })).data).toHaveLength(listed);
  }

  it('refuses a request that is not a valid Messages request, naming it', async () => {
    const noMax = { custom_id: 'n', params: { model: 'mock-chat', messages: [{ role: 'user', content: 'x' }] } };
    await refused(client, { requests: [req('a', 'fine'), noMax] }, 400, 'invalid_request_error', 'requests.1: params.max_tokens');
    await refused(client, { requests: [{ custom_id: 's', params: { ...req('s', 'x').params, stream: true } }] }, 400, 'invalid_request_error', 'stream');
    await refused(client, { requests: [] }, 400, 'invalid_request_error', 'requests');
    await refused(client, {}, 400, 'invalid_request_error', 'requests');
    await refused(client, { requests: [{ custom_id: 'bad id!', params: req('x', 'x').params }] }, 400, 'invalid_request_error', 'custom_id');
  });

  it('refuses duplicate custom_ids and requests on two models', async () => {
    await refused(client, { requests: [req('a', 'x'), req('a', 'y')] }, 400, 'invalid_request_error', 'is used by an earlier request');
    await refused(client, { requests: [req('a', 'x'), req('b', 'y', 'claude-batch')] }, 400, 'invalid_request_error', 'one model');
  });

  it('refuses a model the key may not use, one that does not exist, one whose upstream has no batch API', async () => {
    await refused(narrow, { requests: [req('a', 'x')] }, 403, 'permission_error');
    await refused(client, { requests: [req('a', 'x', 'no-such-model')] }, 404, 'not_found_error');
    await refused(client, { requests: [req('a', 'x', 'bedrock-only')] }, 400, 'invalid_request_error', 'no upstream that runs batches');
  });

  it('refuses, for a model on an OpenAI upstream, content only an Anthropic upstream takes', async () => {
    const doc = {
      custom_id: 'doc',
      params: {
        model: 'gpt-batch',
        max_tokens: 16,
        messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'x' } }] }],
      },
    };
    await refused(client, { requests: [req('fine', 'x', 'gpt-batch'), doc] }, 400, 'invalid_request_error', 'requests.1: params.');
  });

  it('refuses a plan without the Anthropic endpoint', async () => {
    await expect(free.messages.batches.create({ requests: [req('a', 'x')] })).rejects.toMatchObject({ status: 403 });
    await expect(free.messages.batches.list()).rejects.toMatchObject({ status: 403 });
  });

  it('refuses over 100,000 requests, and a body over the size bound (413)', async () => {
    const many = Array.from({ length: 100_001 }, () => 0);
    await refused(client, { requests: many }, 400, 'invalid_request_error', 'at most 100000 requests');
    const big = Array.from({ length: 2000 }, (_, i) => req(`l${i}`, 'x'.repeat(200)));
    expect(Buffer.byteLength(JSON.stringify({ requests: big }))).toBeGreaterThan(UPLOAD_MAX);
    await refused(client, { requests: big }, 413, 'request_too_large');
  });

  it('answers hostile bodies and queries with a 4xx in the Anthropic shape, never a 5xx', async () => {
    const url = `${gw.url}/anthropic/v1/messages/batches`;
    const headers = { 'x-api-key': client.apiKey ?? '', 'content-type': 'application/json' };
    const before = await gw.store.ledger('acme');
    const cases: Array<[string, RequestInit]> = [
      [url, { method: 'POST', headers, body: 'not json' }],
      [url, { method: 'POST', headers, body: '[]' }],
      [url, { method: 'POST', headers, body: '{"requests":"x"}' }],
      [url, { method: 'POST', headers, body: '{"requests":[{"custom_id":"a","params":[]}]}' }],
      [url, { method: 'POST', headers, body: '{"requests":[{"custom_id":"a","params":{"model":"mock-chat","max_tokens":-1,"messages":[]}}]}' }],
      [url, { method: 'POST', headers, body: `{"requests":[${'['.repeat(200)}${']'.repeat(200)}]}` }],
      [`${url}?limit=0`, { headers }],
      [`${url}?limit=abc`, { headers }],
      [`${url}/msgbatch_nope`, { headers }],
      [`${url}/msgbatch_nope/results`, { headers }],
      [`${url}/msgbatch_nope/cancel`, { method: 'POST', headers }],
      [`${url}/msgbatch_nope`, { method: 'DELETE', headers }],
    ];
    for (const [u, init] of cases) {
      const res = await fetch(u, init);
      expect(res.status, `${init.method ?? 'GET'} ${u} ${String(init.body ?? '').slice(0, 60)}`).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(await res.json()).toMatchObject({ type: 'error', error: { type: expect.any(String), message: expect.any(String) } });
    }
    const after = await gw.store.ledger('acme');
    expect(after.heldNano).toBe(before.heldNano);
    expect(after.spentNano).toBe(before.spentNano);
  });

  it('refuses a missing or malformed key in the Anthropic shape', async () => {
    const res = await fetch(`${gw.url}/anthropic/v1/messages/batches`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
  });

  it("keeps a Message Batch's requests and results out of /v1/files, whose pages stay full", async () => {
    const auth = { authorization: `Bearer ${client.apiKey}` };
    const form = new FormData();
    form.append('purpose', 'batch');
    const line = { custom_id: 'f', method: 'POST', url: '/v1/chat/completions', body: { model: 'mock-chat', messages: [{ role: 'user', content: 'x' }] } };
    form.append('file', new Blob([`${JSON.stringify(line)}\n`]), 'in.jsonl');
    const up = (await (await fetch(`${gw.url}/v1/files`, { method: 'POST', headers: auth, body: form })).json()) as { id: string };
    const made: string[] = [];
    for (const w of ['h1', 'h2', 'h3']) made.push((await client.messages.batches.create({ requests: [req(w, w)] })).id);
    for (const id of made) await ended(client, id);
    const page = (await (await fetch(`${gw.url}/v1/files?limit=1`, { headers: auth })).json()) as { data: Array<{ id: string }>; has_more: boolean };
    expect(page.data.map((f) => f.id)).toEqual([up.id]);
    expect(page.has_more).toBe(false);
    const hidden = `file-msgreq-${(made[0] as string).replace(/^msgbatch_/, '')}`;
    expect((await fetch(`${gw.url}/v1/files/${hidden}/content`, { headers: auth })).status).toBe(404);
    // Neither API reads the other's batches.
    const json = { ...auth, 'content-type': 'application/json' };
    const openaiBatch = (await (
      await fetch(`${gw.url}/v1/batches`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ input_file_id: up.id, endpoint: '/v1/chat/completions', completion_window: '24h' }),
      })
    ).json()) as { id: string };
    await expect(client.messages.batches.retrieve(openaiBatch.id)).rejects.toMatchObject({ status: 404 });
    await expect(client.messages.batches.cancel(openaiBatch.id)).rejects.toMatchObject({ status: 404 });
    expect((await fetch(`${gw.url}/v1/batches/${made[0]}`, { headers: auth })).status).toBe(404);
    for (const w of ['h4', 'h5']) made.push((await client.messages.batches.create({ requests: [req(w, w)] })).id);
    const listed = (await (await fetch(`${gw.url}/v1/batches?limit=1`, { headers: auth })).json()) as { data: Array<{ id: string }> };
    expect(listed.data.map((x) => x.id)).toEqual([openaiBatch.id]);
    expect((await fetch(`${gw.url}/v1/batches/${made[0]}/cancel`, { method: 'POST', headers: auth })).status).toBe(404);
    await until(
      async () => ((await (await fetch(`${gw.url}/v1/batches/${openaiBatch.id}`, { headers: auth })).json()) as { status: string }).status === 'completed',
      15_000,
    );
    await fetch(`${gw.url}/v1/files/${up.id}`, { method: 'DELETE', headers: auth });
  });

  it("answers 404 for another account's batch", async () => {
    const b = await client.messages.batches.create({ requests: [req('mine', 'mine')] });
    await expect(other.messages.batches.retrieve(b.id)).rejects.toMatchObject({ status: 404 });
    await expect(other.messages.batches.cancel(b.id)).rejects.toMatchObject({ status: 404 });
    await expect(other.messages.batches.delete(b.id)).rejects.toMatchObject({ status: 404 });
    const res = await fetch(`${gw.url}/anthropic/v1/messages/batches/${b.id}/results`, { headers: { 'x-api-key': other.apiKey ?? '' } });
    expect(res.status).toBe(404);
    // Its requests are no file of /v1/files.
    const files = (await (await fetch(`${gw.url}/v1/files`, { headers: { authorization: `Bearer ${client.apiKey}` } })).json()) as {
      data: Array<{ purpose: string }>;
    };
    expect(files.data.filter((f) => f.purpose.startsWith('message_batch'))).toEqual([]);
    await ended(client, b.id);
  });
});
