// Imagen on Vertex AI through the gateway: the official openai SDK's images.generate on a route whose target is
// provider vertex with an imagen-* upstreamModel, the gateway in a child process whose credentials are the fake GKE
// metadata server's. The request reaches :predict translated (prompt, sampleCount, aspectRatio from size,
// outputOptions), the answer validates as OpenAI's ImagesResponse, money is per image at the size's price; what
// Imagen has no equivalent for is a 400 naming the field before any call, and an answer whose every image Google's
// filter left out is a 400 content_filter charging nothing. images.edit reaches imagen-3.0-capability-001's :predict as
// raw and mask references (the mask's transparency turned into Imagen's white), charged at the size made.
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeMetadata, type FakeMetadata } from '../fakes/google/metadata.ts';
import { IMAGEN_FILTERED, IMAGEN_PNG, startFakeGoogle, type FakeGoogle } from '../fakes/google/vertex.ts';
import { basics, route } from '../helpers/manifests.ts';
import { greyPixels, rgbPng, rgbaPng } from '../helpers/png.ts';
import { expectConforms } from '../helpers/openapi.ts';
import type { GatewayProcess } from '../helpers/process.ts';
import { monthSpend, spentSince, startGoogleGateway } from './google-harness.ts';

const SQUARE_NANO = 40_000_000; // 0.04 USD per image
const WIDE_NANO = 60_000_000;
const SMALL_NANO = 10_000_000;

let metadata: FakeMetadata;
let google: FakeGoogle;
let gw: GatewayProcess;
let key: string;
let openai: OpenAI;

beforeAll(async () => {
  metadata = await startFakeMetadata();
  google = await startFakeGoogle({ bearer: (t) => metadata.valid(t), apiKeys: new Set() });
  const b = basics();
  key = b.keys.builder;
  gw = await startGoogleGateway(
    [
      ...b.docs,
      route(
        'imagen',
        [
          {
            name: 'vertex-imagen',
            provider: 'vertex',
            region: 'us-central1',
            project: 'proj-1',
            baseUrl: google.url,
            upstreamModel: 'imagen-3.0-generate-002',
            credentials: { ambient: {} },
          },
        ],
        {
          type: 'image',
          pricing: {
            inputPerMTokUsd: 0,
            perImage: [
              { size: '1024x1024', usd: SQUARE_NANO / 1e9 },
              { size: '1408x768', usd: WIDE_NANO / 1e9 },
            ],
          },
        },
      ),
      route(
        'imagen-edit',
        [
          {
            name: 'vertex-imagen-edit',
            provider: 'vertex',
            region: 'us-central1',
            project: 'proj-1',
            baseUrl: google.url,
            upstreamModel: 'imagen-3.0-capability-001',
            credentials: { ambient: {} },
          },
        ],
        {
          type: 'image',
          pricing: {
            inputPerMTokUsd: 0,
            perImage: [
              { size: '64x32', usd: SMALL_NANO / 1e9 },
              { size: '1024x1024', usd: SQUARE_NANO / 1e9 },
            ],
          },
        },
      ),
    ],
    { GCE_METADATA_HOST: metadata.host },
  );
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.stop();
  await Promise.all([google?.close(), metadata?.close()]);
});

describe('Imagen on Vertex AI through /v1/images/generations', () => {
  it('translates to :predict and back (openai SDK), charging each image at its size price', async () => {
    const before = await monthSpend(gw, key);
    const res = await openai.images.generate({
      model: 'imagen',
      prompt: 'a lighthouse',
      n: 2,
      size: '1408x768',
      output_format: 'jpeg',
      output_compression: 80,
    });
    expectConforms('ImagesResponse', res);
    expect(res.data?.map((d) => d.b64_json)).toEqual([IMAGEN_PNG, IMAGEN_PNG]);
    expect(res.data?.[0]?.revised_prompt).toBe('a lighthouse, detailed');
    expect(res.output_format).toBe('jpeg');
    const call = google.calls.at(-1);
    expect(call?.path).toBe('/v1/projects/proj-1/locations/us-central1/publishers/google/models/imagen-3.0-generate-002:predict');
    expect(call?.headers.authorization).toMatch(/^Bearer /);
    expect(call?.body).toEqual({
      instances: [{ prompt: 'a lighthouse' }],
      parameters: { sampleCount: 2, aspectRatio: '16:9', outputOptions: { mimeType: 'image/jpeg', compressionQuality: 80 } },
    });
    expect(await spentSince(gw, key, before)).toBe(2 * WIDE_NANO);
  });

  it('refuses what Imagen has no equivalent for, with a 400 naming the field, before any call', async () => {
    const calls = google.calls.length;
    const refused = async (body: object, param: string): Promise<void> => {
      const r = await fetch(`${gw.url}/v1/images/generations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'imagen', prompt: 'x', ...body }),
      });
      expect(r.status).toBe(400);
      const e = (await r.json()) as { error: { param: string } };
      expectConforms('ErrorResponse', e);
      expect(e.error.param).toBe(param);
    };
    await refused({ response_format: 'url' }, 'response_format');
    await refused({ stream: true }, 'stream');
    await refused({ output_format: 'webp' }, 'output_format');
    await refused({ background: 'transparent' }, 'background');
    await refused({ size: '1536x1024' }, 'size');
    expect(google.calls.length).toBe(calls);
  });

  it('answers 400 content_filter when the filter left no image, charging nothing', async () => {
    const before = await monthSpend(gw, key);
    const err = await openai.images.generate({ model: 'imagen', prompt: `a ${IMAGEN_FILTERED}` }).catch((e: unknown) => e);
    expect((err as { status?: number }).status).toBe(400);
    expect((err as { code?: string }).code).toBe('content_filter');
    expect(String((err as Error).message)).toContain('safety filter');
    expect(await monthSpend(gw, key)).toBe(before);
  });
});

/** A 64x32 photo, and a mask transparent in its left half (what OpenAI edits). */
const PHOTO = rgbaPng(64, 32, () => 255);
const LEFT_HALF = rgbaPng(64, 32, (x) => (x < 32 ? 0 : 255));
const png = (b: Buffer, name: string) => toFile(b, name, { type: 'image/png' });

interface EditBody {
  instances: Array<{ prompt: string; referenceImages: Array<{ referenceType: string; referenceId: number; referenceImage: { bytesBase64Encoded: string } }> }>;
  parameters: Record<string, unknown>;
}

describe('Imagen editing on Vertex AI through /v1/images/edits', () => {
  it('a mask: raw and user-provided mask references, inpainting, charged per image at the size made', async () => {
    const before = await monthSpend(gw, key);
    const res = await openai.images.edit({
      model: 'imagen-edit',
      image: await png(PHOTO, 'photo.png'),
      mask: await png(LEFT_HALF, 'mask.png'),
      prompt: 'a boat',
      n: 2,
    });
    expectConforms('ImagesResponse', res);
    expect(res.data?.map((d) => d.b64_json)).toEqual([PHOTO.toString('base64'), PHOTO.toString('base64')]);
    const call = google.calls.at(-1);
    expect(call?.path).toBe('/v1/projects/proj-1/locations/us-central1/publishers/google/models/imagen-3.0-capability-001:predict');
    const body = call?.body as unknown as EditBody;
    expect(body.parameters).toEqual({ editMode: 'EDIT_MODE_INPAINT_INSERTION', sampleCount: 2 });
    const [raw, mask] = body.instances[0]?.referenceImages ?? [];
    expect(body.instances[0]?.prompt).toBe('a boat');
    expect(raw).toMatchObject({ referenceType: 'REFERENCE_TYPE_RAW', referenceId: 1, referenceImage: { bytesBase64Encoded: PHOTO.toString('base64') } });
    expect(mask).toMatchObject({ referenceType: 'REFERENCE_TYPE_MASK', referenceId: 2, maskImageConfig: { maskMode: 'MASK_MODE_USER_PROVIDED' } });
    // Imagen edits where its mask is white: OpenAI's transparent left half.
    const m = greyPixels(Buffer.from(mask?.referenceImage.bytesBase64Encoded ?? '', 'base64'));
    expect([m.width, m.height, m.at(0, 0), m.at(31, 31), m.at(32, 0), m.at(63, 31)]).toEqual([64, 32, 255, 255, 0, 0]);
    // Held at the dearest size (the edit's size is the image's), charged at the size the images came back in.
    expect(await spentSince(gw, key, before)).toBe(2 * SMALL_NANO);
  });

  it('no mask: the raw image alone, Imagen edits it whole by the prompt', async () => {
    await openai.images.edit({ model: 'imagen-edit', image: await png(PHOTO, 'photo.png'), prompt: 'at night' });
    const body = google.calls.at(-1)?.body as unknown as EditBody;
    expect(body.instances[0]?.referenceImages.map((r) => r.referenceType)).toEqual(['REFERENCE_TYPE_RAW']);
    expect(body.parameters).toEqual({ editMode: 'EDIT_MODE_DEFAULT', sampleCount: 1 });
  });

  it('what Imagen cannot do is a 400 naming the field before admission, nothing called or charged', async () => {
    const calls = google.calls.length;
    const before = await monthSpend(gw, key);
    const photo = async () => png(PHOTO, 'photo.png');
    for (const [params, param] of [
      [{ n: 5 }, 'n'],
      [{ stream: true }, 'stream'],
      [{ size: '1024x1024' }, 'size'],
      [{ response_format: 'url' }, 'response_format'],
      [{ output_format: 'webp' }, 'output_format'],
      [{ image: [PHOTO, PHOTO] }, 'image'],
      [{ mask: rgbPng(64, 32) }, 'mask'],
    ] as const) {
      const { image, mask, ...rest } = params as { image?: Buffer[]; mask?: Buffer };
      const err = await openai.images
        .edit({
          model: 'imagen-edit',
          prompt: 'x',
          image: image ? await Promise.all(image.map((b, i) => png(b, `${i}.png`))) : await photo(),
          ...(mask ? { mask: await png(mask, 'mask.png') } : {}),
          ...(rest as object),
        } as never)
        .catch((e: unknown) => e);
      expect((err as { status?: number }).status, param).toBe(400);
      expect((err as { param?: string }).param, param).toBe(param);
    }
    expect(google.calls.length).toBe(calls);
    expect(await monthSpend(gw, key)).toBe(before);
  });
});
