// Image generation and edits through the gateway with the official openai SDK (images.generate, streamed partial
// images, images.edit with a file and a mask) against a fake speaking OpenAI's and Azure OpenAI's wire format; the
// built-in mock too. Money is exact: per image by size and quality (dall-e-3's table), or by the image tokens the
// upstream reports (gpt-image-1: text input, image input and output tokens each at its price); N concurrent calls
// against a budget that fits N-1 holds admit N-1. Bad input (a size the model does not serve, a file that is not an
// image, a form over the bound, no image part) is a 4xx in OpenAI's shape, before any upstream call, charging nothing.
// Answers validate against OpenAI's published OpenAPI description.
import { request as httpRequest } from 'node:http';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IMAGE_FORM_MAX_BYTES } from '../../gateway/http/multipart-images.ts';
import { MOCK_IMAGE_TOKENS } from '../../gateway/providers/mock/image.ts';
import { AZURE_KEY, PNG_1X1, startImagesUpstream, type ImagesUpstream } from '../fakes/images-upstream.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { apiKey, basics, route, secret } from '../helpers/manifests.ts';
import { eventSchemaOf, expectConforms } from '../helpers/openapi.ts';
import { until } from '../helpers/until.ts';

let up: ImagesUpstream;
let gw: TestGateway;
let client: OpenAI;
let key: string;

// dall-e-3's prices (USD per image), and gpt-image-1's per million tokens: text in 5, image in 10, out 40.
const HD_NANO = 80_000_000;
const STD_NANO = 40_000_000;
const WIDE_HD_NANO = 120_000_000;
const TEXT_IN = 5000; // nano-USD per token
const IMAGE_IN = 10_000;
const OUT = 40_000;
const MAX_OUT = 6240; // the route's maxOutputTokens: gpt-image-1's largest image, high quality

const BURST = 4;
const tight = apiKey('tight-key', 'acme', { monthlyBudgetUsd: ((BURST - 1) * HD_NANO) / 1e9 });

const pngFile = Buffer.from(PNG_1X1, 'base64');

beforeAll(async () => {
  up = await startImagesUpstream();
  const b = basics();
  key = b.keys.builder;
  const openai = (name: string, upstreamModel: string) => [{ name, provider: 'openai' as const, baseUrl: `${up.url}/v1`, upstreamModel }];
  const azure = (name: string, upstreamModel: string, apiVersion?: string) => [
    {
      name,
      provider: 'azure-openai' as const,
      baseUrl: up.url,
      upstreamModel,
      ...(apiVersion ? { apiVersion } : {}),
      credentials: { secretKeyRef: { name: 'azure-images', key: 'api-key' } },
    },
  ];
  const dalle = {
    type: 'image' as const,
    pricing: {
      inputPerMTokUsd: 0,
      perImage: [
        { size: '1024x1024', quality: 'standard', usd: STD_NANO / 1e9 },
        { size: '1024x1024', quality: 'hd', usd: HD_NANO / 1e9 },
        { size: '1792x1024', quality: 'standard', usd: 0.08 },
        { size: '1792x1024', quality: 'hd', usd: WIDE_HD_NANO / 1e9 },
      ],
    },
  };
  const gptImage = {
    type: 'image' as const,
    maxOutputTokens: MAX_OUT,
    imageSizes: ['1024x1024', '1536x1024', '1024x1536', 'auto'],
    pricing: { inputPerMTokUsd: TEXT_IN / 1000, imageInputPerMTokUsd: IMAGE_IN / 1000, outputPerMTokUsd: OUT / 1000 },
  };
  gw = await startGateway([
    ...b.docs,
    ...tight.docs,
    secret('azure-images', { 'api-key': AZURE_KEY }),
    route('dall-e-3', openai('oai-dalle', 'dall-e-3'), dalle),
    route('gpt-image-1', openai('oai-gpt-image', 'gpt-image-1'), gptImage),
    route('azure-dalle', azure('az-dated', 'dalle3-deployment', '2024-10-21'), dalle),
    route('azure-gpt-image', azure('az-v1', 'gpt-image-1-deployment'), gptImage),
    route('mock-image', [{ name: 'mock-a', provider: 'mock' }], {
      type: 'image',
      pricing: {
        inputPerMTokUsd: 0,
        perImage: [
          { size: '1024x1024', quality: 'low', usd: 0.011 },
          { size: '1024x1024', usd: 0.167 },
        ],
      },
    }),
    route('mock-tokens', [{ name: 'mock-b', provider: 'mock' }], { ...gptImage }),
    route('chatty', openai('oai-chat', 'gpt-4o')),
  ]);
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await up?.close();
});

async function spendOf(auth: string): Promise<number> {
  const r = await fetch(`${gw.url}/v1/me`, { headers: { authorization: `Bearer ${auth}` } });
  return Math.round(((await r.json()) as { month_spend_usd: number }).month_spend_usd * 1e9);
}

const last = () => gw.sink.events.at(-1);

/** A refused call: 4xx in OpenAI's error shape, no upstream call, nothing charged. */
async function expectRefused(res: Response, status: number, param: string | null, before: { calls: number; spend: number }): Promise<string> {
  expect(res.status).toBe(status);
  const body = (await res.json()) as { error: { message: string; type: string; param: string | null } };
  expectConforms('ErrorResponse', body);
  expect(body.error.type).toBe('invalid_request_error');
  if (param !== null) expect(body.error.param).toBe(param);
  expect(up.calls.length).toBe(before.calls);
  expect(await spendOf(key)).toBe(before.spend);
  return body.error.message;
}

const state = async () => ({ calls: up.calls.length, spend: await spendOf(key) });

function form(fields: Record<string, string>, files: Array<{ field: string; data: Uint8Array; name: string; type?: string }>): FormData {
  const f = new FormData();
  for (const [k, v] of Object.entries(fields)) f.append(k, v);
  for (const x of files) f.append(x.field, new Blob([x.data], { type: x.type ?? 'image/png' }), x.name);
  return f;
}

const postForm = (body: FormData, auth = key) => fetch(`${gw.url}/v1/images/edits`, { method: 'POST', headers: { authorization: `Bearer ${auth}` }, body });
const postJson = (body: unknown, auth = key) =>
  fetch(`${gw.url}/v1/images/generations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${auth}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

describe('POST /v1/images/generations', () => {
  it('generates per image (dall-e-3, openai SDK): URLs passed through, the upstream model sent, n x the size and quality price', async () => {
    const spend = await spendOf(key);
    const { data, response } = await client.images
      .generate({ model: 'dall-e-3', prompt: 'a lighthouse at dusk', size: '1024x1024', quality: 'hd', style: 'vivid', n: 2 })
      .withResponse();
    expectConforms('ImagesResponse', data);
    expect(data.data?.map((d) => d.url)).toEqual(['https://images.example/img-1.png', 'https://images.example/img-1.png']);
    expect(response.headers.get('x-svc-upstream')).toBe('oai-dalle');
    const sent = up.calls.at(-1);
    expect(sent?.path).toBe('/v1/images/generations');
    expect(sent?.body).toMatchObject({ model: 'dall-e-3', prompt: 'a lighthouse at dusk', size: '1024x1024', quality: 'hd', style: 'vivid', n: 2 });
    expect(last()).toMatchObject({
      endpoint: 'images.generations',
      requestedModel: 'dall-e-3',
      status: 200,
      outputTokens: 2,
      costNano: 2 * HD_NANO,
      unit: 'images',
      units: 2,
    });
    expect(await spendOf(key)).toBe(spend + 2 * HD_NANO);
  });

  it('b64_json answers; a quality left open is charged at the dearest price of the size (the answer does not say)', async () => {
    const res = await client.images.generate({ model: 'dall-e-3', prompt: 'a fox', size: '1792x1024', response_format: 'b64_json' });
    expectConforms('ImagesResponse', res);
    expect(res.data?.[0]?.b64_json).toBe(PNG_1X1);
    expect(last()).toMatchObject({ status: 200, outputTokens: 1, costNano: WIDE_HD_NANO, unit: 'images', units: 1 });
  });

  it('prices gpt-image-1 by the tokens it reports: text input and output at their prices, exactly', async () => {
    up.usage = { text: 12, image: 0, output: 4160 };
    const res = await client.images.generate({
      model: 'gpt-image-1',
      prompt: 'a red cube',
      size: '1024x1024',
      quality: 'high',
      moderation: 'low',
      background: 'opaque',
      output_format: 'png',
    });
    expectConforms('ImagesResponse', res);
    expect(res.usage?.output_tokens).toBe(4160);
    expect(up.calls.at(-1)?.body).toMatchObject({ model: 'gpt-image-1', moderation: 'low', background: 'opaque', output_format: 'png' });
    expect(last()).toMatchObject({ status: 200, inputTokens: 12, outputTokens: 4160, costNano: 12 * TEXT_IN + 4160 * OUT, unit: 'images', units: 1 });
  });

  it('streams partial images (openai SDK): each event conforms, the completed event settles the call exactly', async () => {
    up.usage = { text: 7, image: 0, output: 1056 };
    const stream = await client.images.generate({
      model: 'gpt-image-1',
      prompt: 'a boat',
      stream: true,
      partial_images: 2,
      size: '1536x1024',
      quality: 'medium',
    });
    const types: string[] = [];
    for await (const ev of stream) {
      types.push(ev.type);
      const schema = eventSchemaOf('ImageGenStreamEvent', ev.type);
      expect(schema).not.toBeNull();
      expectConforms(schema as string, ev);
    }
    expect(types).toEqual(['image_generation.partial_image', 'image_generation.partial_image', 'image_generation.completed']);
    expect(last()).toMatchObject({
      endpoint: 'images.generations',
      stream: true,
      status: 200,
      inputTokens: 7,
      outputTokens: 1056,
      costNano: 7 * TEXT_IN + 1056 * OUT,
      unit: 'images',
      units: 1,
    });
  });

  it('Azure OpenAI: the dated API (deployment in the path, api-version, api-key) and the v1 API', async () => {
    const dated = await client.images.generate({ model: 'azure-dalle', prompt: 'a bridge', size: '1024x1024', quality: 'standard' });
    expectConforms('ImagesResponse', dated);
    const sent = up.calls.at(-1);
    expect(sent?.path).toBe('/openai/deployments/dalle3-deployment/images/generations?api-version=2024-10-21');
    expect(sent?.headers['api-key']).toBe(AZURE_KEY);
    expect(last()).toMatchObject({ status: 200, costNano: STD_NANO, unit: 'images', units: 1 });
    up.usage = { text: 3, image: 0, output: 272 };
    const v1 = await client.images.generate({ model: 'azure-gpt-image', prompt: 'a kite' });
    expectConforms('ImagesResponse', v1);
    expect(up.calls.at(-1)?.path).toBe('/openai/v1/images/generations');
    expect(up.calls.at(-1)?.body.model).toBe('gpt-image-1-deployment');
    expect(last()).toMatchObject({ status: 200, costNano: 3 * TEXT_IN + 272 * OUT, unit: 'images', units: 1 });
  });

  it('refuses a size or quality the model does not serve with a 400 naming it, before any upstream call, charging nothing', async () => {
    const before = await state();
    const size = await expectRefused(await postJson({ model: 'dall-e-3', prompt: 'x', size: '512x512' }), 400, 'size', before);
    expect(size).toContain('1024x1024, 1792x1024');
    await expectRefused(await postJson({ model: 'dall-e-3', prompt: 'x', size: '1024x1024', quality: 'low' }), 400, 'quality', before);
    await expectRefused(await postJson({ model: 'gpt-image-1', prompt: 'x', size: '1792x1024' }), 400, 'size', before);
    await expectRefused(await postJson({ model: 'gpt-image-1', prompt: 'x', n: 11 }), 400, 'n', before);
    await expectRefused(await postJson({ model: 'gpt-image-1', prompt: 'x', size: 'big' }), 400, 'size', before);
    await expectRefused(await postJson({ model: 'chatty', prompt: 'x' }), 400, null, before);
  });

  it(`holds n x the dearest price: of ${BURST} concurrent calls against a budget that fits ${BURST - 1} holds, exactly ${BURST - 1} are admitted`, async () => {
    let open: () => void = () => {};
    up.gate = new Promise<void>((r) => (open = r));
    const calls0 = up.calls.length;
    const statuses: number[] = [];
    // Quality left open: the hold is the hd price, and the answer (dall-e-3 names no quality) is charged at it.
    const body = { model: 'dall-e-3', prompt: 'a tree', size: '1024x1024' };
    const all = Array.from({ length: BURST }, () => postJson(body, tight.key).then((r) => (statuses.push(r.status), r)));
    try {
      await until(() => up.calls.length - calls0 === BURST - 1 && statuses.length === 1, 30_000, 'three calls upstream, one refused');
    } finally {
      up.gate = null;
      open();
    }
    await Promise.all(all);
    expect(statuses.filter((s) => s === 200)).toHaveLength(BURST - 1);
    expect(statuses.filter((s) => s >= 400 && s < 500)).toHaveLength(1);
    expect(await spendOf(tight.key)).toBe((BURST - 1) * HD_NANO);
  });
});

describe('POST /v1/images/edits', () => {
  it('edits with a file and a mask (openai SDK): the form reaches the upstream intact, image input tokens priced apart', async () => {
    up.usage = { text: 9, image: 388, output: 4160 };
    const image = await toFile(pngFile, 'photo.png', { type: 'image/png' });
    const mask = await toFile(pngFile, 'mask.png', { type: 'image/png' });
    const res = await client.images.edit({
      model: 'gpt-image-1',
      image,
      mask,
      prompt: 'add a hat',
      size: '1024x1024',
      quality: 'high',
      n: 1,
      input_fidelity: 'high',
    });
    expectConforms('ImagesResponse', res);
    const sent = up.calls.at(-1);
    expect(sent?.path).toBe('/v1/images/edits');
    expect(sent?.body).toMatchObject({ model: 'gpt-image-1', prompt: 'add a hat', size: '1024x1024', quality: 'high', n: '1', input_fidelity: 'high' });
    expect(sent?.files.map((f) => [f.field, f.name, f.type, f.size])).toEqual([
      ['image', 'photo.png', 'image/png', pngFile.length],
      ['mask', 'mask.png', 'image/png', pngFile.length],
    ]);
    expect(sent?.files[0]?.head).toEqual([0x89, 0x50, 0x4e, 0x47]);
    expect(last()).toMatchObject({
      endpoint: 'images.edits',
      status: 200,
      inputTokens: 9 + 388,
      outputTokens: 4160,
      costNano: 9 * TEXT_IN + 388 * IMAGE_IN + 4160 * OUT,
      unit: 'images',
      units: 1,
    });
  });

  it('takes several images (image[]) and streams edit events', async () => {
    up.usage = { text: 4, image: 600, output: 272 };
    const files = await Promise.all([toFile(pngFile, 'a.png'), toFile(pngFile, 'b.png')]);
    const stream = await client.images.edit({ model: 'azure-gpt-image', image: files, prompt: 'merge', stream: true, partial_images: 1 });
    const types: string[] = [];
    for await (const ev of stream) types.push(ev.type);
    expect(types).toEqual(['image_edit.partial_image', 'image_edit.completed']);
    const sent = up.calls.at(-1);
    expect(sent?.path).toBe('/openai/v1/images/edits');
    expect(sent?.files.map((f) => f.field)).toEqual(['image[]', 'image[]']);
    expect(last()).toMatchObject({
      endpoint: 'images.edits',
      stream: true,
      status: 200,
      costNano: 4 * TEXT_IN + 600 * IMAGE_IN + 272 * OUT,
      unit: 'images',
      units: 1,
    });
  });

  it('refuses a file that is not an image, a mask that is not a PNG, no image part, a JSON body, a size not served: 400, nothing sent', async () => {
    const before = await state();
    const text = new TextEncoder().encode('this is not an image');
    const fields = { model: 'gpt-image-1', prompt: 'x' };
    const notImage = await expectRefused(await postForm(form(fields, [{ field: 'image', data: text, name: 'cat.png' }])), 400, 'image', before);
    expect(notImage).toContain('not a PNG, JPEG or WebP');
    const jpeg = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0, 0x10]);
    await expectRefused(
      await postForm(
        form(fields, [
          { field: 'image', data: pngFile, name: 'a.png' },
          { field: 'mask', data: jpeg, name: 'm.jpg' },
        ]),
      ),
      400,
      'mask',
      before,
    );
    const missing = await expectRefused(await postForm(form(fields, [])), 400, 'image', before);
    expect(missing).toContain('no image');
    await expectRefused(await postForm(form(fields, [{ field: 'photo', data: pngFile, name: 'a.png' }])), 400, 'photo', before);
    await expectRefused(
      await fetch(`${gw.url}/v1/images/edits`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(fields),
      }),
      400,
      null,
      before,
    );
    await expectRefused(await postForm(form({ ...fields, size: '64x64' }, [{ field: 'image', data: pngFile, name: 'a.png' }])), 400, 'size', before);
    await expectRefused(await postForm(form({ model: 'gpt-image-1' }, [{ field: 'image', data: pngFile, name: 'a.png' }])), 400, 'prompt', before);
  });

  it(`refuses a form over ${IMAGE_FORM_MAX_BYTES / 1024 / 1024} MiB with 413 before reading it, and one that grows past it`, async () => {
    const before = await state();
    // Declared too large: refused on the header, the body never sent.
    const declared = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(`${gw.url}/v1/images/edits`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'multipart/form-data; boundary=b', 'content-length': String(IMAGE_FORM_MAX_BYTES + 1) },
      });
      req.on('response', (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.write('--b\r\n');
    });
    expect(declared.status).toBe(413);
    expect(JSON.parse(declared.body)).toMatchObject({ error: { type: 'invalid_request_error', code: 'request_too_large' } });
    // No length declared (sent chunked): cut once it passes the bound.
    const big = new Uint8Array(IMAGE_FORM_MAX_BYTES + 1024);
    big.set(pngFile);
    const encoded = new Response(form({ model: 'gpt-image-1', prompt: 'x' }, [{ field: 'image', data: big, name: 'big.png' }]));
    const grown = await fetch(`${gw.url}/v1/images/edits`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': encoded.headers.get('content-type') as string },
      body: encoded.body,
      duplex: 'half',
    } as RequestInit);
    expect(grown.status).toBe(413);
    expect(((await grown.json()) as { error: { message: string } }).error.message).toContain('larger than 50 MiB');
    expect(up.calls.length).toBe(before.calls);
    expect(await spendOf(key)).toBe(before.spend);
  });
});

describe('the mock provider (offline demo)', () => {
  it('answers a small valid PNG as b64_json, per image or by tokens; refuses url with a clear 400 charging nothing', async () => {
    const res = await client.images.generate({ model: 'mock-image', prompt: 'a lighthouse', size: '1024x1024', quality: 'low', n: 2 });
    expectConforms('ImagesResponse', res);
    const png = Buffer.from(res.data?.[0]?.b64_json ?? '', 'base64');
    expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    expect(last()).toMatchObject({ status: 200, costNano: 2 * 11_000_000, unit: 'images', units: 2 });
    const tokens = await client.images.generate({ model: 'mock-tokens', prompt: 'abcd' });
    expect(tokens.usage?.output_tokens).toBe(MOCK_IMAGE_TOKENS);
    expect(last()).toMatchObject({
      status: 200,
      inputTokens: 1,
      outputTokens: MOCK_IMAGE_TOKENS,
      costNano: 1 * TEXT_IN + MOCK_IMAGE_TOKENS * OUT,
      unit: 'images',
      units: 1,
    });
    // Priced by tokens, two images: the output is their tokens, the images counted apart.
    const two = await client.images.generate({ model: 'mock-tokens', prompt: 'abcd', n: 2 });
    expect(two.data).toHaveLength(2);
    expect(last()).toMatchObject({ status: 200, outputTokens: 2 * MOCK_IMAGE_TOKENS, unit: 'images', units: 2 });
    const spend = await spendOf(key);
    const url = await postJson({ model: 'mock-image', prompt: 'x', response_format: 'url' });
    expect(url.status).toBe(400);
    expect(((await url.json()) as { error: { message: string } }).error.message).toContain('b64_json');
    expect(await spendOf(key)).toBe(spend);
    const edit = await client.images.edit({ model: 'mock-image', image: await toFile(pngFile, 'a.png'), prompt: 'hat', quality: 'low' });
    expectConforms('ImagesResponse', edit);
    expect(last()).toMatchObject({ endpoint: 'images.edits', status: 200, costNano: 11_000_000, unit: 'images', units: 1 });
  });
});
