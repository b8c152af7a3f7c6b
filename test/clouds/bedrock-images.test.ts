// Amazon's image models on Bedrock (Nova Canvas, Titan Image Generator) through /v1/images/generations: the official
// openai SDK against the fake Bedrock runtime (SigV4 checked, the answer shape checked by the AWS SDK in
// bedrock-fake-sdk.test.ts). The request reaches InvokeModel as TEXT_IMAGE (numberOfImages, width and height from
// size, quality hd as premium), the answer validates as OpenAI's ImagesResponse, money is per image by size and
// quality; what the model has no equivalent for is a 400 naming the field before any call. images.edit reaches
// InvokeModel as INPAINTING (the mask's transparency turned into the models' black), a mask required.
import { randomBytes } from 'node:crypto';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BEDROCK_FAKE_PNG, startFakeBedrock, type FakeBedrock } from '../fakes/bedrock/runtime.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { basics, route, secret } from '../helpers/manifests.ts';
import { expectConforms } from '../helpers/openapi.ts';
import { greyPixels, noisyRgbPng, rgbaPng } from '../helpers/png.ts';

const KEYS = { AWS_ACCESS_KEY_ID: 'AKIAFAKEIMAGES000001', AWS_SECRET_ACCESS_KEY: 'fake-images-secret-0123456789' };
const CANVAS = 'amazon.nova-canvas-v1:0';
const STD_NANO = 40_000_000;
const PREMIUM_NANO = 60_000_000;
const SMALL_STD_NANO = 10_000_000;
const SMALL_PREMIUM_NANO = 15_000_000;

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
          { size: '64x32', quality: 'standard', usd: SMALL_STD_NANO / 1e9 },
          { size: '64x32', quality: 'high', usd: SMALL_PREMIUM_NANO / 1e9 },
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

/** A 64x32 photo, and a mask transparent in its top half (what OpenAI edits). */
const PHOTO = rgbaPng(64, 32, () => 255);
const TOP_HALF = rgbaPng(64, 32, (_x, y) => (y < 16 ? 0 : 255));
const png = (b: Buffer, name: string) => toFile(b, name, { type: 'image/png' });

interface InpaintingBody {
  taskType: string;
  inPaintingParams: { image: string; text: string; maskImage: string };
  imageGenerationConfig: Record<string, unknown>;
}

describe('Nova Canvas on Bedrock through /v1/images/edits', () => {
  it('translates to InvokeModel INPAINTING (SigV4-signed) and back, charged per image at the quality asked and the size made', async () => {
    const res = await openai.images.edit({
      model: 'canvas',
      image: await png(PHOTO, 'photo.png'),
      mask: await png(TOP_HALF, 'mask.png'),
      prompt: 'a kite',
      n: 3,
      quality: 'high',
    });
    expectConforms('ImagesResponse', res);
    expect(res.data?.map((d) => d.b64_json)).toEqual(Array(3).fill(PHOTO.toString('base64')));
    const call = bedrock.calls.at(-1);
    expect(call?.rawPath).toBe(`/model/${encodeURIComponent(CANVAS)}/invoke`);
    expect(call?.auth).toBe(KEYS.AWS_ACCESS_KEY_ID);
    const body = call?.body as unknown as InpaintingBody;
    expect(body.taskType).toBe('INPAINTING');
    expect(body.inPaintingParams.image).toBe(PHOTO.toString('base64'));
    expect(body.inPaintingParams.text).toBe('a kite');
    expect(body.imageGenerationConfig).toEqual({ numberOfImages: 3, quality: 'premium' });
    // Amazon's models repaint where the mask is black: OpenAI's transparent top half.
    const m = greyPixels(Buffer.from(body.inPaintingParams.maskImage, 'base64'));
    expect([m.width, m.height, m.at(0, 0), m.at(63, 15), m.at(0, 16), m.at(63, 31)]).toEqual([64, 32, 0, 0, 255, 255]);
    expect(gw.sink.events.at(-1)).toMatchObject({ endpoint: 'images.edits', status: 200, outputTokens: 3, costNano: 3 * SMALL_PREMIUM_NANO });
  });

  it('an image and a mask past the spool threshold (waiting in temporary files) are read from disk into the body', async () => {
    // Random alpha does not compress: each PNG is above 1 MiB, so both wait on disk until the body is made.
    const alpha = randomBytes(1200 * 1000);
    const big = rgbaPng(1200, 1000, (x, y) => alpha[y * 1200 + x] as number);
    expect(big.length).toBeGreaterThan(1024 * 1024);
    await openai.images.edit({ model: 'canvas', image: await png(big, 'big.png'), mask: await png(big, 'mask.png'), prompt: 'a kite' });
    const body = bedrock.calls.at(-1)?.body as unknown as InpaintingBody;
    expect(body.inPaintingParams.image).toBe(big.toString('base64'));
    const m = greyPixels(Buffer.from(body.inPaintingParams.maskImage, 'base64'));
    for (const i of [0, 1, 2, 999, 600_000, 1_199_999]) expect(m.at(i % 1200, Math.floor(i / 1200)), String(i)).toBe(alpha[i] === 0 ? 0 : 255);
    expect(gw.sink.events.at(-1)).toMatchObject({ endpoint: 'images.edits', status: 200, outputTokens: 1 });
  });

  it('a mask past the spool threshold that cannot be used: 400 on mask when the body is made, nothing sent or charged', async () => {
    const calls = bedrock.calls.length;
    const opaque = noisyRgbPng(700, 600, randomBytes(700 * 600 * 3));
    expect(opaque.length).toBeGreaterThan(1024 * 1024);
    const err = await openai.images
      .edit({ model: 'canvas', image: await png(PHOTO, 'photo.png'), mask: await png(opaque, 'mask.png'), prompt: 'x' })
      .catch((e: unknown) => e);
    expect((err as { status?: number }).status).toBe(400);
    expect((err as { param?: string }).param).toBe('mask');
    expect(String((err as Error).message)).toMatch(/no transparency/);
    expect(bedrock.calls.length).toBe(calls);
    expect(gw.sink.events.at(-1)).toMatchObject({ endpoint: 'images.edits', status: 400, costNano: 0 });
  });

  it('without a mask, or what the model cannot do: a 400 naming the field before admission, nothing called or charged', async () => {
    const calls = bedrock.calls.length;
    const events = gw.sink.events.length;
    const mask = async () => png(TOP_HALF, 'mask.png');
    for (const [params, param] of [
      [{}, 'mask'],
      [{ mask: true, n: 6 }, 'n'],
      [{ mask: true, stream: true }, 'stream'],
      [{ mask: true, size: '64x32' }, 'size'],
      [{ mask: true, quality: 'low' }, 'quality'],
      [{ mask: true, output_format: 'jpeg' }, 'output_format'],
    ] as const) {
      const { mask: withMask, ...rest } = params as { mask?: boolean };
      const err = await openai.images
        .edit({ model: 'canvas', prompt: 'x', image: await png(PHOTO, 'photo.png'), ...(withMask ? { mask: await mask() } : {}), ...(rest as object) } as never)
        .catch((e: unknown) => e);
      expect((err as { status?: number }).status, param).toBe(400);
      expect((err as { param?: string }).param, param).toBe(param);
    }
    expect(bedrock.calls.length).toBe(calls);
    expect(gw.sink.events.slice(events).every((e) => e.costNano === 0)).toBe(true);
  });
});
