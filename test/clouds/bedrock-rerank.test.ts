// Bedrock's rerank models through the gateway: /v1/rerank and Cohere's SDK on /cohere/v2/rerank reach the Bedrock
// Agent Runtime Rerank API (POST /rerank, SigV4 for service bedrock, the model by ARN) on the fake Bedrock runtime,
// whose answers the official @aws-sdk/client-bedrock-agent-runtime reads as it does the real service's (so the fake
// speaks the real wire format). Bedrock bills per query (up to 100 documents each): the charge is search units x the
// route's price, exactly; a field Bedrock has no equivalent for is a 400 that costs nothing.
import { BedrockAgentRuntimeClient, RerankCommand } from '@aws-sdk/client-bedrock-agent-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { CohereClientV2 } from 'cohere-ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeBedrock, type FakeBedrock } from '../fakes/bedrock/runtime.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { basics, route, secret } from '../helpers/manifests.ts';

const KEYS = { AWS_ACCESS_KEY_ID: 'AKIAFAKERERANK000001', AWS_SECRET_ACCESS_KEY: 'fake-rerank-secret-0123456789' };
const UNIT_NANO = 1_000_000; // 0.001 USD per query (search unit), as AWS lists Amazon Rerank 1.0
const COHERE_ON_BEDROCK = 'cohere.rerank-v3-5:0';
const DOCS = ['Paris is the capital of France.', 'Berlin is the capital of Germany.', 'The Seine flows through Paris.'];

let bedrock: FakeBedrock;
let gw: TestGateway;
let key: string;

beforeAll(async () => {
  bedrock = await startFakeBedrock({ keys: [{ accessKeyId: KEYS.AWS_ACCESS_KEY_ID, secretAccessKey: KEYS.AWS_SECRET_ACCESS_KEY }] });
  const b = basics();
  key = b.keys.builder;
  const target = (name: string, upstreamModel: string): never =>
    ({ name, provider: 'bedrock', region: 'us-west-2', baseUrl: bedrock.url, upstreamModel, credentials: { secretKeyRef: { name: 'aws-keys' } } }) as never;
  gw = await startGateway([
    ...b.docs,
    secret('aws-keys', KEYS),
    route('amazon-rerank', [target('bedrock-amazon', 'amazon.rerank-v1:0')], {
      type: 'rerank',
      pricing: { inputPerMTokUsd: 0, perSearchUnitUsd: UNIT_NANO / 1e9 },
    }),
    route('cohere-rerank-bedrock', [target('bedrock-cohere', `arn:aws:bedrock:us-west-2::foundation-model/${COHERE_ON_BEDROCK}`)], {
      type: 'rerank',
      pricing: { inputPerMTokUsd: 0, perSearchUnitUsd: (2 * UNIT_NANO) / 1e9 },
    }),
  ]);
});

afterAll(async () => {
  await gw?.close();
  await bedrock?.close();
});

async function spend(): Promise<number> {
  const r = await fetch(`${gw.url}/v1/me`, { headers: { authorization: `Bearer ${key}` } });
  return Math.round(((await r.json()) as { month_spend_usd: number }).month_spend_usd * 1e9);
}

describe('the fake Bedrock Agent Runtime, read by @aws-sdk/client-bedrock-agent-runtime', () => {
  it('answers Rerank (signed by the SDK) with results the SDK parses', async () => {
    const client = new BedrockAgentRuntimeClient({
      region: 'us-west-2',
      endpoint: bedrock.url,
      credentials: { accessKeyId: KEYS.AWS_ACCESS_KEY_ID, secretAccessKey: KEYS.AWS_SECRET_ACCESS_KEY },
      requestHandler: new NodeHttpHandler(),
      maxAttempts: 1,
    });
    const out = await client.send(
      new RerankCommand({
        queries: [{ type: 'TEXT', textQuery: { text: 'capital of France' } }],
        sources: DOCS.map((text) => ({ type: 'INLINE', inlineDocumentSource: { type: 'TEXT', textDocument: { text } } })),
        rerankingConfiguration: {
          type: 'BEDROCK_RERANKING_MODEL',
          bedrockRerankingConfiguration: {
            modelConfiguration: { modelArn: 'arn:aws:bedrock:us-west-2::foundation-model/amazon.rerank-v1:0' },
            numberOfResults: 2,
          },
        },
      }),
    );
    expect(out.results?.map((r) => [r.index, r.relevanceScore])).toEqual([
      [2, 0.5],
      [1, 0.75],
    ]);
    const call = bedrock.calls.at(-1)!;
    expect(call).toMatchObject({ action: 'rerank', modelId: 'amazon.rerank-v1:0', auth: KEYS.AWS_ACCESS_KEY_ID });
    // The SDK's own request is what the gateway must send: the fake holds the gateway to it.
    expect(call.rawPath).toBe('/rerank');
  });
});

describe("Bedrock's rerank models through the gateway", () => {
  it('reranks /v1/rerank through the Agent Runtime, signed, the model by ARN, documents returned from the call, charged per query', async () => {
    const before = await spend();
    const res = await fetch(`${gw.url}/v1/rerank`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'amazon-rerank',
        query: 'capital of France',
        documents: [DOCS[0], { text: DOCS[1] }, DOCS[2]],
        top_n: 2,
        return_documents: true,
      }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-svc-upstream')).toBe('bedrock-amazon');
    expect(await res.json()).toEqual({
      results: [
        { index: 2, relevance_score: 0.5, document: { text: DOCS[2] } },
        { index: 1, relevance_score: 0.75, document: { text: DOCS[1] } },
      ],
      meta: { billed_units: { search_units: 1 } },
    });
    const call = bedrock.calls.at(-1)!;
    expect(call).toMatchObject({ action: 'rerank', auth: KEYS.AWS_ACCESS_KEY_ID });
    expect(call.headers.authorization).toContain('/us-west-2/bedrock/aws4_request');
    expect(call.body).toEqual({
      queries: [{ type: 'TEXT', textQuery: { text: 'capital of France' } }],
      sources: DOCS.map((text) => ({ type: 'INLINE', inlineDocumentSource: { type: 'TEXT', textDocument: { text } } })),
      rerankingConfiguration: {
        type: 'BEDROCK_RERANKING_MODEL',
        bedrockRerankingConfiguration: {
          modelConfiguration: { modelArn: 'arn:aws:bedrock:us-west-2::foundation-model/amazon.rerank-v1:0' },
          numberOfResults: 2,
        },
      },
    });
    expect(gw.sink.events.at(-1)).toMatchObject({
      endpoint: 'rerank',
      upstream: 'bedrock-amazon',
      status: 200,
      inputTokens: 0,
      outputTokens: 1,
      costNano: UNIT_NANO,
    });
    expect(await spend()).toBe(before + UNIT_NANO);
  });

  it("serves Cohere's SDK on /cohere: 250 documents are 3 queries, charged 3 x the unit price, an ARN passed as given", async () => {
    const before = await spend();
    const cohere = new CohereClientV2({ token: key, baseUrl: `${gw.url}/cohere`, maxRetries: 0 });
    const many = Array.from({ length: 250 }, (_, i) => `passage ${i}`);
    const res = await cohere.rerank({ model: 'cohere-rerank-bedrock', query: 'passage 3', documents: many, topN: 5 });
    expect(res.results).toHaveLength(5);
    expect(res.results[0]?.index).toBe(249);
    expect(res.meta?.billedUnits?.searchUnits).toBe(3);
    expect(bedrock.calls.at(-1)?.modelId).toBe(COHERE_ON_BEDROCK);
    const cost = 3 * 2 * UNIT_NANO;
    expect(gw.sink.events.at(-1)).toMatchObject({ requestedModel: 'cohere-rerank-bedrock', outputTokens: 3, costNano: cost });
    expect(await spend()).toBe(before + cost);
  });

  it('refuses max_tokens_per_doc (Bedrock has no such field) with a 400 naming it: no Bedrock call, nothing charged', async () => {
    const before = { calls: bedrock.calls.length, spend: await spend() };
    const res = await fetch(`${gw.url}/v1/rerank`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'amazon-rerank', query: 'q', documents: DOCS, max_tokens_per_doc: 64 }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { param: string } }).error.param).toBe('max_tokens_per_doc');
    expect(bedrock.calls.length).toBe(before.calls);
    expect(await spend()).toBe(before.spend);
  });

  it("passes Bedrock's refusal on as a 400 in the caller's shape, charging nothing", async () => {
    bedrock.enqueue({ kind: 'error', type: 'ValidationException', status: 400, message: 'The text of a source is too long.' });
    const before = await spend();
    const res = await fetch(`${gw.url}/cohere/v2/rerank`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'amazon-rerank', query: 'q', documents: DOCS }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { message: string };
    expect(body.message).toContain('The text of a source is too long.');
    expect(await spend()).toBe(before);
  });
});
