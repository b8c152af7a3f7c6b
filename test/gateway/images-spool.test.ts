// Large image edit uploads wait on disk: each file of the form past the spool's threshold is written to a file of its
// own (mode 0600, in a private directory), streamed to the upstream from there inside the re-encoded form, and deleted
// when the call ends: the answer, a refused file, a client that left mid-form or while the upstream worked. A storm of
// such disconnects leaves no file behind and no socket open at the upstream. The official openai SDK makes the calls
// that succeed; raw HTTP makes the ones that are cut on purpose.
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PNG_1X1, startImagesUpstream, type ImagesUpstream } from '../fakes/images-upstream.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { basics, route } from '../helpers/manifests.ts';
import { until } from '../helpers/until.ts';

const ABOVE = 64 * 1024;
/** A PNG's bytes followed by padding: 300 kB, past the threshold (the gateway types a file by its first bytes). */
const BIG_PNG = Buffer.concat([Buffer.from(PNG_1X1, 'base64'), Buffer.alloc(300_000)]);

let up: ImagesUpstream;
let gw: TestGateway;
let client: OpenAI;
let key: string;
let parent: string;

beforeAll(async () => {
  up = await startImagesUpstream();
  parent = await mkdtemp(join(tmpdir(), 'svc-image-spool-test-'));
  const b = basics();
  key = b.keys.builder;
  gw = await startGateway(
    [
      ...b.docs,
      route('dall-e-2', [{ name: 'oai', provider: 'openai', baseUrl: `${up.url}/v1`, upstreamModel: 'dall-e-2' }], {
        type: 'image',
        pricing: { inputPerMTokUsd: 0, perImage: [{ size: '1024x1024', usd: 0.02 }] },
      }),
    ],
    { uploads: { parent, aboveBytes: ABOVE } },
  );
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await up?.close();
  if (parent) await rm(parent, { recursive: true, force: true });
});

async function spooled(): Promise<string[]> {
  const entries = await readdir(parent, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

const BOUNDARY = 'image-spool-boundary-7';
const head = Buffer.from(
  `--${BOUNDARY}\r\ncontent-disposition: form-data; name="model"\r\n\r\ndall-e-2\r\n` +
    `--${BOUNDARY}\r\ncontent-disposition: form-data; name="prompt"\r\n\r\na hat\r\n` +
    `--${BOUNDARY}\r\ncontent-disposition: form-data; name="image"; filename="a.png"\r\ncontent-type: image/png\r\n\r\n`,
);
const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
const LENGTH = head.length + BIG_PNG.length + tail.length;

function rawEdit(parts: Buffer[]) {
  const u = new URL(gw.url);
  const req = request({
    host: u.hostname,
    port: u.port,
    method: 'POST',
    path: '/v1/images/edits',
    headers: { authorization: `Bearer ${key}`, 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'content-length': LENGTH },
  });
  const answer = new Promise<number | null>((resolve) => {
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', () => resolve(null));
    });
    req.on('error', () => resolve(null));
  });
  for (const p of parts) req.write(p);
  return { req, answer };
}

describe('image edit files past the threshold wait in temporary files', () => {
  it('success (openai SDK): image and mask private on disk while the call runs, sent whole, deleted after the answer', async () => {
    let open = (): void => {};
    up.gate = new Promise((r) => (open = r));
    const before = up.calls.length;
    const call = client.images.edit({
      model: 'dall-e-2',
      image: (await toFile(BIG_PNG, 'a.png', { type: 'image/png' })) as File,
      mask: (await toFile(BIG_PNG, 'm.png', { type: 'image/png' })) as File,
      prompt: 'a hat',
      size: '1024x1024',
    });
    await until(() => up.calls.length > before, 20_000, 'the upstream got the form');
    const files = await spooled();
    expect(files).toHaveLength(2);
    for (const f of files) {
      expect((await stat(f)).mode & 0o777).toBe(0o600);
      expect((await stat(f)).size).toBe(BIG_PNG.length);
    }
    open();
    up.gate = null;
    const res = await call;
    expect(res.data?.length).toBe(1);
    expect(up.calls.at(-1)?.files.map((f) => [f.field, f.size, f.head])).toEqual([
      ['image', BIG_PNG.length, [0x89, 0x50, 0x4e, 0x47]],
      ['mask', BIG_PNG.length, [0x89, 0x50, 0x4e, 0x47]],
    ]);
    // Deleted as the call ends (its settlement follows the answer's last byte).
    await until(async () => (await spooled()).length === 0, 10_000, 'the form deleted after the answer');
  });

  it('a large mask that is not a PNG: 400 before any call, its file and the image deleted', async () => {
    const before = up.calls.length;
    const jpeg = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(200_000)]);
    await expect(
      client.images.edit({
        model: 'dall-e-2',
        image: (await toFile(BIG_PNG, 'a.png', { type: 'image/png' })) as File,
        mask: (await toFile(jpeg, 'm.jpg', { type: 'image/jpeg' })) as File,
        prompt: 'a hat',
      }),
    ).rejects.toMatchObject({ status: 400 });
    expect(up.calls.length).toBe(before);
    expect(await spooled()).toEqual([]);
  });

  it('a disconnect storm (30 edits cut mid-form or while the upstream works): no file left, no socket open at the upstream', async () => {
    let open = (): void => {};
    up.gate = new Promise((r) => (open = r));
    const before = up.calls.length;
    try {
      const mid = Array.from({ length: 15 }, () => rawEdit([head, BIG_PNG.subarray(0, ABOVE * 2)]));
      const waiting = Array.from({ length: 15 }, () => {
        const e = rawEdit([head, BIG_PNG, tail]);
        e.req.end();
        return e;
      });
      await until(() => up.calls.length === before + 15, 60_000, 'every whole form reached the upstream');
      await until(async () => (await spooled()).length === 30, 60_000, 'every form spooled');
      for (const e of [...mid, ...waiting]) e.req.destroy();
      expect((await Promise.all([...mid, ...waiting].map((e) => e.answer))).every((a) => a === null)).toBe(true);
      await until(async () => (await spooled()).length === 0, 30_000, 'no form left in the spool');
      await until(() => up.sockets() === 0, 30_000, 'no socket left open at the upstream');
      expect(gw.sink.events.slice(-15).every((e) => e.status === 499 && e.costNano === 0)).toBe(true);
    } finally {
      open();
      up.gate = null;
    }
  });
});
