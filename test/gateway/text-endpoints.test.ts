// Legacy text completions (fill-in-the-middle included), rerank and moderations through the gateway: the official
// openai SDK for completions and moderations; rerank with Cohere's own SDK (cohere-ai's CohereClientV2 pointed at
// {gateway}/cohere) and with plain fetch in the wire shape Cohere v2, Jina and vLLM share, to upstreams of those
// shapes and of Voyage AI's. Fakes answer in each vendor's wire format; money is exact (cost = units x
// price), holds bound the charge, bad input is a 400 in OpenAI's shape with nothing charged, and every answer OpenAI
// describes validates against its published OpenAPI description.
import { Cohere, CohereClientV2, CohereError } from 'cohere-ai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTextUpstream, type TextUpstream } from '../fakes/text-upstream.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { apiKey, basics, route } from '../helpers/manifests.ts';
import { expectConforms } from '../helpers/openapi.ts';
import { until } from '../helpers/until.ts';

let up: TextUpstream;
let gw: TestGateway;
let client: OpenAI;
let cohere: CohereClientV2;
let key: string;

// Prices in nano-USD per token (route() lists 1.04 and 2.08 USD per million tokens).
const IN = 1040;
const OUT = 2080;
const UNIT_NANO = 2_000_000; // 0.002 USD per search unit
const JINA_IN = 50; // 0.05 USD per million tokens
const MOD_IN = 200; // 0.2 USD per million tokens

const tight = apiKey('tight-key', 'acme');
/** The hold of one call of the concurrency test (its body is fixed): input bytes x price + max_tokens x best_of x price. */
const BURST_BODY = { model: 'code-fim', prompt: 'def add(a, b):', max_tokens: 10, n: 2, best_of: 3 };
const BURST_HOLD = Buffer.byteLength(JSON.stringify(BURST_BODY)) * IN + 10 * 3 * OUT;
const BURST = 5;
const tightBudget = apiKey('budget-key', 'acme', { monthlyBudgetUsd: ((BURST - 1) * BURST_HOLD) / 1e9 });
/** The rerank of the concurrency test: 150 documents, so at most 2 search units (each document one 500-token chunk). */
const RERANK_BURST_BODY = { model: 'rerank-vllm', query: 'q', documents: Array.from({ length: 150 }, (_, i) => `d${i}`) };
const RERANK_HOLD = Buffer.byteLength(JSON.stringify(RERANK_BURST_BODY)) * JINA_IN + 2 * UNIT_NANO;
const rerankBudget = apiKey('rerank-budget-key', 'acme', { monthlyBudgetUsd: ((BURST - 1) * RERANK_HOLD) / 1e9 });

beforeAll(async () => {
  up = await startTextUpstream();
  const b = basics();
  key = b.keys.builder;
  const openai = (name: string, upstreamModel: string) => [{ name, provider: 'openai' as const, baseUrl: up.baseUrl, upstreamModel }];
  gw = await startGateway([
    ...b.docs,
    ...tight.docs,
    ...tightBudget.docs,
    ...rerankBudget.docs,
    route('code-fim', openai('vllm-a', 'deepseek-coder'), { type: 'completions', fim: true }),
    route('text-plain', openai('vllm-b', 'gpt-3.5-turbo-instruct'), { type: 'completions' }),
    route('gpt-chat', openai('chat-a', 'gpt-4o')),
    route('text-cached', openai('vllm-c', 'gpt-3.5-turbo-instruct'), { type: 'completions', cache: {} }),
    route('rerank-cohere', [{ name: 'cohere-a', provider: 'openai', baseUrl: up.cohereBaseUrl, upstreamModel: 'rerank-v3.5' }], {
      type: 'rerank',
      pricing: { inputPerMTokUsd: 0, perSearchUnitUsd: UNIT_NANO / 1e9 },
    }),
    route('rerank-jina', openai('jina-a', 'jina-reranker-v2'), { type: 'rerank', pricing: { inputPerMTokUsd: JINA_IN / 1000 } }),
    route('rerank-voyage', [{ name: 'voyage-a', provider: 'openai', baseUrl: up.voyageBaseUrl, upstreamModel: 'rerank-2.5', rerankApi: 'voyage' } as never], {
      type: 'rerank',
      pricing: { inputPerMTokUsd: JINA_IN / 1000 },
    }),
    route('rerank-vllm', openai('vllm-r', 'bge-reranker'), { type: 'rerank', pricing: { inputPerMTokUsd: JINA_IN / 1000, perSearchUnitUsd: UNIT_NANO / 1e9 } }),
    route('omni-moderation-latest', openai('mod-a', 'omni-moderation-latest'), { type: 'moderation', pricing: { inputPerMTokUsd: 0 } }),
    route('mod-priced', openai('mod-b', 'omni-moderation-2024-09-26'), { type: 'moderation', pricing: { inputPerMTokUsd: MOD_IN / 1000 } }),
  ]);
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
  cohere = new CohereClientV2({ token: key, baseUrl: `${gw.url}/cohere`, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await up?.close();
});

async function post(path: string, body: unknown, auth = key): Promise<Response> {
  return fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${auth}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

async function spendOf(auth: string): Promise<number> {
  const r = await fetch(`${gw.url}/v1/me`, { headers: { authorization: `Bearer ${auth}` } });
  return Math.round(((await r.json()) as { month_spend_usd: number }).month_spend_usd * 1e9);
}

/** A refused call: 4xx in OpenAI's error shape, no upstream call, nothing charged. */
async function expectRefused(res: Response, status: number, param: string | null, before: { calls: number; spend: number }): Promise<{ message: string }> {
  expect(res.status).toBe(status);
  const body = (await res.json()) as { error: { message: string; type: string; param: string | null; code: string } };
  expectConforms('ErrorResponse', body);
  expect(body.error.type).toBe('invalid_request_error');
  if (param !== null) expect(body.error.param).toBe(param);
  expect(up.calls.length).toBe(before.calls);
  expect(await spendOf(key)).toBe(before.spend);
  return body.error;
}

describe('POST /v1/completions', () => {
  it('completes a prompt (openai SDK): the served model, max_tokens sent upstream, exact cost, a conforming answer', async () => {
    const { data, response } = await client.completions
      .create({ model: 'text-plain', prompt: 'Say hi', max_tokens: 20, stop: ['\n'], echo: true, logprobs: 1 })
      .withResponse();
    expectConforms('CreateCompletionResponse', data);
    expect(data.model).toBe('text-plain');
    expect(data.choices[0]?.text).toBe('Say hi return a + b');
    expect(data.choices[0]?.logprobs?.tokens).toEqual([' return a + b']);
    expect(response.headers.get('x-svc-upstream')).toBe('vllm-b');
    const sent = up.calls.at(-1);
    expect(sent?.path).toBe('/v1/completions');
    expect(sent?.body).toMatchObject({ model: 'gpt-3.5-turbo-instruct', prompt: 'Say hi', max_tokens: 20, stop: ['\n'], echo: true, logprobs: 1 });
    const e = gw.sink.events.at(-1);
    expect(e).toMatchObject({ endpoint: 'completions', requestedModel: 'text-plain', status: 200, stream: false, inputTokens: 9, outputTokens: 5 });
    expect(e?.costNano).toBe(9 * IN + 5 * OUT);
  });

  it('sends the model’s maxOutputTokens when the call gives no max_tokens (what the hold assumed)', async () => {
    await client.completions.create({ model: 'text-plain', prompt: ['a', 'b'] });
    expect(up.calls.at(-1)?.body.max_tokens).toBe(4096);
  });

  it('streams (openai SDK): chunks carry the served model, usage is forced upstream and charged exactly', async () => {
    const stream = await client.completions.create({ model: 'text-plain', prompt: 'Say hi', max_tokens: 20, stream: true });
    let text = '';
    for await (const chunk of stream) {
      // OpenAI's description reuses CreateCompletionResponse for chunks, whose finish_reason may not be null; its own
      // streams send null until the last chunk, as every upstream does: the chunks that end a choice are validated.
      if (chunk.choices.every((c) => c.finish_reason !== null)) expectConforms('CreateCompletionResponse', chunk);
      expect(chunk.model).toBe('text-plain');
      text += chunk.choices[0]?.text ?? '';
    }
    expect(text).toBe(' return a + b');
    expect(up.calls.at(-1)?.body.stream_options).toEqual({ include_usage: true });
    const e = gw.sink.events.at(-1);
    expect(e).toMatchObject({ endpoint: 'completions', stream: true, status: 200, inputTokens: 9, outputTokens: 5, costNano: 9 * IN + 5 * OUT });
  });

  it('fills in the middle (a suffix) on a model whose route sets fim, streamed and not', async () => {
    const done = await client.completions.create({ model: 'code-fim', prompt: 'def add(a, b):\n', suffix: '\nprint(add(1, 2))', max_tokens: 16 });
    expect(done.choices[0]?.text).toBe(' return a + b');
    expect(up.calls.at(-1)?.body).toMatchObject({ model: 'deepseek-coder', suffix: '\nprint(add(1, 2))' });
    const stream = await client.completions.create({ model: 'code-fim', prompt: 'def add(a, b):\n', suffix: '\n', max_tokens: 16, stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.text ?? '';
    expect(text).toBe(' return a + b');
    expect(up.calls.at(-1)?.body.suffix).toBe('\n');
  });

  it('refuses FIM on a model without it, and a chat model, with a clear 400; nothing charged, no upstream call', async () => {
    const before = { calls: up.calls.length, spend: await spendOf(key) };
    const fim = await expectRefused(await post('/v1/completions', { model: 'text-plain', prompt: 'x', suffix: 'y' }), 400, 'suffix', before);
    expect(fim.message).toContain('does not complete fill-in-the-middle');
    const chat = await expectRefused(await post('/v1/completions', { model: 'gpt-chat', prompt: 'x' }), 400, 'model', before);
    expect(chat.message).toContain('Chat models are not translated to text completions');
    // The SDK sees a BadRequestError.
    await expect(client.completions.create({ model: 'text-plain', prompt: 'x', suffix: 'y' })).rejects.toBeInstanceOf(OpenAI.BadRequestError);
  });

  it('refuses fields of the wrong type or range with a 400 naming the field; nothing charged', async () => {
    const before = { calls: up.calls.length, spend: await spendOf(key) };
    await expectRefused(await post('/v1/completions', { model: 'text-plain', prompt: 3 }), 400, 'prompt', before);
    await expectRefused(await post('/v1/completions', { model: 'text-plain', prompt: 'x', echo: 'yes' }), 400, 'echo', before);
    await expectRefused(await post('/v1/completions', { model: 'text-plain', prompt: 'x', logprobs: 6 }), 400, 'logprobs', before);
    await expectRefused(await post('/v1/completions', { model: 'text-plain', prompt: 'x', n: 3, best_of: 2 }), 400, 'best_of', before);
    await expectRefused(await post('/v1/completions', { model: 'text-plain', prompt: 'x', best_of: 2, stream: true }), 400, 'best_of', before);
    await expectRefused(await post('/v1/completions', { model: 'text-plain', prompt: 'x', stop: ['a', 'b', 'c', 'd', 'e'] }), 400, 'stop', before);
  });

  it('is answered from the response cache like chat: a repeated call at temperature 0 is a hit, no upstream call, charged 0', async () => {
    const body = { model: 'text-cached', prompt: 'cache me', max_tokens: 8, temperature: 0 };
    const first = await post('/v1/completions', body);
    expect(first.headers.get('x-svc-cache')).toBe('miss');
    const text = await first.text();
    const calls = up.calls.length;
    const second = await post('/v1/completions', body);
    expect(second.headers.get('x-svc-cache')).toBe('hit');
    expect(second.headers.get('x-svc-upstream')).toBe('cache');
    expect(await second.text()).toBe(text);
    expect(up.calls.length).toBe(calls);
    expect(gw.sink.events.at(-1)).toMatchObject({ endpoint: 'completions', cache: 'hit', costNano: 0, cacheSavedNano: 9 * IN + 5 * OUT });
  });

  it(`holds max_tokens x best_of: of ${BURST} concurrent calls against a budget that fits ${BURST - 1} holds, exactly ${BURST - 1} are admitted`, async () => {
    let open = (): void => {};
    up.completion.gate = new Promise<void>((r) => (open = r));
    const calls0 = up.calls.length;
    const statuses: number[] = [];
    const all = Array.from({ length: BURST }, () => post('/v1/completions', BURST_BODY, tightBudget.key).then((r) => (statuses.push(r.status), r)));
    try {
      // Every admitted call is held at the upstream until the refused one has answered: all holds are taken at once.
      await until(() => up.calls.length - calls0 === BURST - 1 && statuses.length === 1, 30_000, 'four calls upstream, one refused');
    } finally {
      up.completion.gate = null;
      open();
    }
    const results = await Promise.all(all);
    expect(statuses.sort()).toEqual([200, 200, 200, 200, 402]);
    const refused = results.find((r) => r.status === 402);
    expect(((await refused?.json()) as { error: { code: string } }).error.code).toBe('budget_exceeded');
    // Each admitted call settles at its exact cost, far below its hold.
    expect(await spendOf(tightBudget.key)).toBe((BURST - 1) * (9 * IN + 5 * OUT));
  });
});

describe('POST /v1/rerank and /cohere/v2/rerank', () => {
  const documents = ['Paris is the capital of France.', 'Berlin is the capital of Germany.', 'The Seine flows through Paris.'];

  it('reranks on a Cohere v2 upstream, priced per search unit; the Cohere alias answers the same', async () => {
    for (const path of ['/v1/rerank', '/cohere/v2/rerank']) {
      const res = await post(path, { model: 'rerank-cohere', query: 'capital of France', documents, top_n: 2 });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { results: Array<{ index: number; relevance_score: number }>; meta: { billed_units: { search_units: number } } };
      expect(body.results.map((r) => r.index)).toEqual([2, 1]);
      expect(body.meta.billed_units.search_units).toBe(1);
      expect(up.calls.at(-1)?.path).toBe('/v2/rerank');
      expect(up.calls.at(-1)?.body).toMatchObject({ model: 'rerank-v3.5', query: 'capital of France', documents, top_n: 2 });
      const e = gw.sink.events.at(-1);
      expect(e).toMatchObject({ endpoint: 'rerank', requestedModel: 'rerank-cohere', status: 200, inputTokens: 0, outputTokens: 1, usageEstimated: false });
      expect(e?.costNano).toBe(1 * UNIT_NANO);
    }
  });

  it('reranks on a Jina upstream, priced per token: cost = reported tokens x price, model rewritten', async () => {
    const res = await post('/v1/rerank', {
      model: 'rerank-jina',
      query: 'capital of France',
      documents: documents.map((text) => ({ text })),
      return_documents: true,
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { model: string; usage: { total_tokens: number }; results: Array<{ document: { text: string } }> };
    expect(body.model).toBe('rerank-jina');
    expect(body.results[0]?.document.text).toBe('The Seine flows through Paris.');
    // The search units counted, in Cohere's field, though Jina bills none (and its own usage kept).
    expect(body).toMatchObject({ usage: { total_tokens: 42 }, meta: { billed_units: { search_units: 1 } } });
    const e = gw.sink.events.at(-1);
    expect(e).toMatchObject({ endpoint: 'rerank', inputTokens: 42, outputTokens: 1 });
    expect(e?.costNano).toBe(42 * JINA_IN);
  });

  it('on a vLLM upstream priced both ways, charges tokens and search units (one per 100 documents)', async () => {
    const many = Array.from({ length: 150 }, (_, i) => `document ${i}`);
    const res = await post('/v1/rerank', { model: 'rerank-vllm', query: 'document 7', documents: many, top_n: 3 });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { meta: unknown }).meta).toEqual({ billed_units: { search_units: 2 } });
    const e = gw.sink.events.at(-1);
    expect(e).toMatchObject({ inputTokens: 42, outputTokens: 2 });
    expect(e?.costNano).toBe(42 * JINA_IN + 2 * UNIT_NANO);
  });

  it(`holds tokens and search units: of ${BURST} concurrent reranks against a budget that fits ${BURST - 1} holds, exactly ${BURST - 1} are admitted`, async () => {
    let open = (): void => {};
    up.rerankGate = new Promise<void>((r) => (open = r));
    const calls0 = up.calls.length;
    const statuses: number[] = [];
    const all = Array.from({ length: BURST }, () => post('/v1/rerank', RERANK_BURST_BODY, rerankBudget.key).then((r) => (statuses.push(r.status), r)));
    try {
      await until(() => up.calls.length - calls0 === BURST - 1 && statuses.length === 1, 30_000, 'four reranks upstream, one refused');
    } finally {
      up.rerankGate = null;
      open();
    }
    const results = await Promise.all(all);
    expect(statuses.sort()).toEqual([200, 200, 200, 200, 402]);
    const refused = results.find((r) => r.status === 402);
    expect(((await refused?.json()) as { error: { code: string } }).error.code).toBe('budget_exceeded');
    // Each admitted rerank settles at its exact cost: 42 tokens and 2 search units.
    expect(await spendOf(rerankBudget.key)).toBe((BURST - 1) * (42 * JINA_IN + 2 * UNIT_NANO));
  });

  it('reranks on a Voyage AI upstream (rerankApi: voyage): top_k and plain strings sent, data read back as results, priced per token', async () => {
    const res = await post('/v1/rerank', {
      model: 'rerank-voyage',
      query: 'capital of France',
      documents: [documents[0], { text: documents[1] }, documents[2]],
      top_n: 2,
      return_documents: true,
      truncation: false,
    });
    expect(res.status).toBe(200);
    expect(up.calls.at(-1)?.path).toBe('/voyage/v1/rerank');
    expect(up.calls.at(-1)?.body).toEqual({ query: 'capital of France', documents, model: 'rerank-2.5', top_k: 2, return_documents: true, truncation: false });
    expect(await res.json()).toEqual({
      model: 'rerank-voyage',
      results: [
        { index: 2, relevance_score: 0.5, document: { text: documents[2] } },
        { index: 1, relevance_score: 0.75, document: { text: documents[1] } },
      ],
      usage: { total_tokens: 42 },
      meta: { billed_units: { search_units: 1 } },
    });
    const e = gw.sink.events.at(-1);
    expect(e).toMatchObject({ endpoint: 'rerank', requestedModel: 'rerank-voyage', upstream: 'voyage-a', status: 200, inputTokens: 42, outputTokens: 1 });
    expect(e?.costNano).toBe(42 * JINA_IN);
  });

  it('refuses max_tokens_per_doc on a Voyage AI upstream, which has no such cap: 400 naming it, nothing charged', async () => {
    const before = { calls: up.calls.length, spend: await spendOf(key) };
    const e = await expectRefused(
      await post('/v1/rerank', { model: 'rerank-voyage', query: 'q', documents, max_tokens_per_doc: 100 }),
      400,
      'max_tokens_per_doc',
      before,
    );
    expect(e.message).toContain('Voyage AI');
  });

  it('refuses 10,000 documents, an empty query, documents of the wrong type and a non-rerank model: 400, nothing charged', async () => {
    const before = { calls: up.calls.length, spend: await spendOf(key) };
    const big = await expectRefused(
      await post('/v1/rerank', { model: 'rerank-cohere', query: 'q', documents: Array.from({ length: 10_000 }, () => 'd') }),
      400,
      'documents',
      before,
    );
    expect(big.message).toContain('1000');
    await expectRefused(await post('/v1/rerank', { model: 'rerank-cohere', query: '  ', documents }), 400, 'query', before);
    await expectRefused(await post('/v1/rerank', { model: 'rerank-cohere', query: 'q', documents: [1, 2] }), 400, 'documents[0]', before);
    await expectRefused(await post('/v1/rerank', { model: 'rerank-cohere', query: 'q', documents: [] }), 400, 'documents', before);
    await expectRefused(await post('/v1/rerank', { model: 'text-plain', query: 'q', documents }), 400, 'model', before);
  });
});

describe("Cohere's SDK on /cohere (CohereClientV2)", () => {
  const documents = ['Paris is the capital of France.', 'Berlin is the capital of Germany.', 'The Seine flows through Paris.'];

  it('reranks through the gateway: results, the search units billed, exact money', async () => {
    const before = await spendOf(key);
    const res = await cohere.rerank({ model: 'rerank-cohere', query: 'capital of France', documents, topN: 2 });
    expect(res.results.map((r) => r.index)).toEqual([2, 1]);
    expect(res.results[0]?.relevanceScore).toBe(0.5);
    expect(res.meta?.billedUnits?.searchUnits).toBe(1);
    expect(up.calls.at(-1)?.body).toMatchObject({ model: 'rerank-v3.5', top_n: 2 });
    expect(gw.sink.events.at(-1)).toMatchObject({ endpoint: 'rerank', requestedModel: 'rerank-cohere', inputTokens: 0, outputTokens: 1, costNano: UNIT_NANO });
    expect(await spendOf(key)).toBe(before + UNIT_NANO);
  });

  it('reads the search units of a model whose upstream bills none (vLLM: tokens and one unit per 100 documents)', async () => {
    const before = await spendOf(key);
    const many = Array.from({ length: 250 }, (_, i) => `document ${i}`);
    const res = await cohere.rerank({ model: 'rerank-vllm', query: 'document 7', documents: many, topN: 1 });
    expect(res.results).toHaveLength(1);
    expect(res.meta?.billedUnits?.searchUnits).toBe(3);
    const cost = 42 * JINA_IN + 3 * UNIT_NANO;
    expect(gw.sink.events.at(-1)).toMatchObject({ inputTokens: 42, outputTokens: 3, costNano: cost });
    expect(await spendOf(key)).toBe(before + cost);
  });

  it("refuses bad input in Cohere's error shape (the SDK raises BadRequestError), nothing charged, no upstream call", async () => {
    const before = { calls: up.calls.length, spend: await spendOf(key) };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ model: 'rerank-cohere', query: 'q', documents: Array.from({ length: 10_000 }, () => 'd') }, 'documents'],
      [{ model: 'rerank-cohere', query: '', documents }, 'query'],
      [{ model: 'rerank-cohere', query: 'q', documents: [1, 2] }, 'documents[0]'],
      [{ model: 'text-plain', query: 'q', documents }, 'model'],
    ];
    for (const [body, field] of cases) {
      const res = await post('/cohere/v2/rerank', body);
      expect(res.status).toBe(400);
      const answer = (await res.json()) as Record<string, unknown>;
      expect(Object.keys(answer)).toEqual(['message']);
      expect(answer.message).toContain(field);
    }
    const err = await cohere.rerank({ model: 'rerank-cohere', query: '', documents }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Cohere.BadRequestError);
    expect((err as CohereError).statusCode).toBe(400);
    expect((err as CohereError).body).toEqual({ message: expect.stringContaining('query') as unknown });
    // A missing key: 401 in Cohere's shape too.
    const anon = await fetch(`${gw.url}/cohere/v2/rerank`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(anon.status).toBe(401);
    expect(Object.keys((await anon.json()) as object)).toEqual(['message']);
    expect(up.calls.length).toBe(before.calls);
    expect(await spendOf(key)).toBe(before.spend);
  });
});

describe('POST /v1/moderations', () => {
  it('moderates text (openai SDK) on a free route, the default model when none is given: a conforming answer, cost 0', async () => {
    const res = await client.moderations.create({ input: 'I will kill the build' });
    expectConforms('CreateModerationResponse', res);
    expect(res.results[0]?.flagged).toBe(true);
    expect(res.model).toBe('omni-moderation-latest');
    expect(up.calls.at(-1)?.path).toBe('/v1/moderations');
    expect(gw.sink.events.at(-1)).toMatchObject({ endpoint: 'moderations', requestedModel: 'omni-moderation-latest', status: 200, costNano: 0 });
  });

  it('moderates text and image parts on a priced route: cost = a quarter of the body bytes x the input price', async () => {
    const body = {
      model: 'mod-priced',
      input: [
        { type: 'text', text: 'a calm sentence' },
        { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
      ],
    };
    const res = await post('/v1/moderations', body);
    expect(res.status).toBe(200);
    const answer = (await res.json()) as unknown;
    expectConforms('CreateModerationResponse', answer);
    expect(answer).toMatchObject({ model: 'mod-priced', results: [{ flagged: false, category_applied_input_types: { violence: ['text', 'image'] } }] });
    expect(up.calls.at(-1)?.body.model).toBe('omni-moderation-2024-09-26');
    const tokens = Math.ceil(Buffer.byteLength(JSON.stringify(body)) / 4);
    const e = gw.sink.events.at(-1);
    expect(e).toMatchObject({ endpoint: 'moderations', inputTokens: tokens, outputTokens: 0, usageEstimated: true });
    expect(e?.costNano).toBe(tokens * MOD_IN);
    // The SDK too, with a list of strings.
    const sdk = await client.moderations.create({ model: 'mod-priced', input: ['one', 'two'] });
    expect(sdk.results).toHaveLength(2);
  });

  it('refuses an input of the wrong type and an unknown part type: 400, nothing charged', async () => {
    const before = { calls: up.calls.length, spend: await spendOf(key) };
    await expectRefused(await post('/v1/moderations', { input: 42 }), 400, 'input', before);
    await expectRefused(await post('/v1/moderations', { input: [{ type: 'audio', audio: 'x' }] }), 400, 'input[0].type', before);
    await expectRefused(await post('/v1/moderations', { model: 'code-fim', input: 'x' }), 400, 'model', before);
  });
});

describe('GET /v1/models', () => {
  it('says what each model serves', async () => {
    const list = (await (await fetch(`${gw.url}/v1/models`)).json()) as { data: Array<{ id: string; type: string }> };
    expectConforms('ListModelsResponse', list);
    const type = Object.fromEntries(list.data.map((m) => [m.id, m.type]));
    expect(type).toMatchObject({ 'code-fim': 'completions', 'rerank-jina': 'rerank', 'omni-moderation-latest': 'moderation', 'gpt-chat': 'chat' });
  });
});
