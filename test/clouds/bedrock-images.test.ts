// Amazon's image models on Bedrock (Nova Canvas, Titan Image Generator) through /v1/images/generations: the official
// openai SDK against the fake Bedrock runtime (SigV4 checked, the answer shape checked by the AWS SDK in
// bedrock-fake-sdk.test.ts). The request reaches InvokeModel as TEXT_IMAGE (numberOfImages, width and height from
// size, quality hd as premium), the answer validates as OpenAI's ImagesResponse, money is per image by size and
// quality; what the model has no equivalent for is a 400 naming the field before any call.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BEDROCK_FAKE_PNG, startFakeBedrock, type FakeBedrock } from '../fakes/bedrock/runtime.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { basics, route, secret } from '../helpers/manifests.ts';
import { expectConforms } from '../helpers/openapi.ts';

const KEYS = { AWS_ACCESS_KEY_ID: 'AKIAFAKEIMAGES000001', AWS_SECRET_ACCESS_KEY: 'fake-images-secret-0123456789' };
const CANVAS = 'amazon.nova-canvas-v1:0';
const STD_NANO = 40_000_000;
const PREMIUM_NANO = 60_000_000;

let bedrock: FakeBedrock;
let gw: TestGateway;
let openai: OpenAI;
let key: string;

beforeAll(async () => {
  bedrock = await startFakeBedrock({ keys: [{ accessKeyId: KEYS.AWS_ACCESS_KEY_ID, secretAccessKey: KEYS.AWS_SECRET_ACCESS_KEY }] });
  const b = basics();
  key = b.keys.builder;
  const target = {
    name: 'bedrock-canvas',
    provider: 'bedrock',
    region: 'us-east-1',
    baseUrl: bedrock.url,
    upstreamModel: CANVAS,
    credentials: { secretKeyRef: { name: 'aws-keys' } },
  } as never;
  gw = await startGateway([
    ...b.docs,
    secret('aws-keys', KEYS),
    route('canvas', [target], {
      type: 'image',
      pricing: {
        inputPerMTokUsd: 0,
        perImage: [
          { size: '1024x1024', quality: 'standard', usd: STD_NANO / 1e9 },
          { size: '1024x1024', quality: 'hd', usd: PREMIUM_NANO / 1e9 },
        ],
      },
    }),
  ]);
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await bedrock?.close();
});

describe('Nova Canvas on Bedrock through /v1/images/generations', () => {
  it('translates to InvokeModel TEXT_IMAGE and back (openai SDK), charging each image at its size and quality', async () => {
    const res = await openai.images.generate({ model: 'canvas', prompt: 'a red boat', n: 2, size: '1024x1024', quality: 'hd' });
    expectConforms('ImagesResponse', res);
    expect(res.data?.map((d) => d.b64_json)).toEqual([BEDROCK_FAKE_PNG, BEDROCK_FAKE_PNG]);
    const call = bedrock.calls.at(-1);
    expect(call?.rawPath).toBe(`/model/${encodeURIComponent(CANVAS)}/invoke`);
    expect(call?.auth).toBe(KEYS.AWS_ACCESS_KEY_ID);
    expect(call?.body).toEqual({
      taskType: 'TEXT_IMAGE',
      textToImageParams: { text: 'a red boat' },
      imageGenerationConfig: { numberOfImages: 2, width: 1024, height: 1024, quality: 'premium' },
    });
    expect(gw.sink.events.at(-1)).toMatchObject({ endpoint: 'images.generations', status: 200, outputTokens: 2, costNano: 2 * PREMIUM_NANO });
  });

  it('a quality left out is standard (Bedrock’s default), charged as such though the hold took premium', async () => {
    await openai.images.generate({ model: 'canvas', prompt: 'a hill' });
    expect((bedrock.calls.at(-1)?.body as { imageGenerationConfig: { quality: string } }).imageGenerationConfig.quality).toBe('standard');
    expect(gw.sink.events.at(-1)).toMatchObject({ status: 200, costNano: STD_NANO });
  });

  it('refuses what the model has no equivalent for with a 400 naming the field, before any call', async () => {
    const calls = bedrock.calls.length;
    for (const [body, param] of [
      [{ response_format: 'url' }, 'response_format'],
      [{ stream: true }, 'stream'],
      [{ output_format: 'jpeg' }, 'output_format'],
      [{ quality: 'low' }, 'quality'],
      [{ size: '512x512' }, 'size'],
    ] as const) {
      const r = await fetch(`${gw.url}/v1/images/generations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'canvas', prompt: 'x', ...body }),
      });
      expect(r.status, param).toBe(400);
      expect(((await r.json()) as { error: { param: string } }).error.param).toBe(param);
    }
    expect(bedrock.calls.length).toBe(calls);
  });
});
