// Large audio uploads wait on disk, not in the heap: past the spool's threshold the upload is written to a file of its
// own (mode 0600, in a private 0700 directory), streamed to the upstream from there, and deleted when the call ends,
// whatever ended it: an answer, an upstream error, a refusal of the file, a 413, a client that left mid-upload or
// while the upstream worked. A storm of such disconnects leaves no file behind and no socket open at the upstream.
// The official openai SDK makes the calls that succeed; raw HTTP makes the ones that are cut on purpose.
import { readdir, stat, mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toneWav8 } from '../../gateway/providers/mock/audio-bytes.ts';
import { OPENAI_KEY, TRANSCRIPT, startAudioUpstream, type AudioUpstream } from '../fakes/audio-upstream.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { basics, route, secret } from '../helpers/manifests.ts';
import { until } from '../helpers/until.ts';

const ABOVE = 64 * 1024;
/** 40 s of 8 kHz 8-bit audio: 320 kB, well past the threshold. */
const CLIP = toneWav8(40);

let up: AudioUpstream;
let storm: AudioUpstream;
let gw: TestGateway;
let client: OpenAI;
let key: string;
let parent: string;

beforeAll(async () => {
  up = await startAudioUpstream();
  storm = await startAudioUpstream();
  parent = await mkdtemp(join(tmpdir(), 'svc-spool-test-'));
  const b = basics();
  key = b.keys.builder;
  const target = (name: string, baseUrl: string) => [
    { name, provider: 'openai' as const, baseUrl, upstreamModel: 'whisper-1', credentials: { secretKeyRef: { name: 'openai-key', key: 'key' } } },
  ];
  const pricing = { type: 'transcription' as const, pricing: { inputPerMTokUsd: 0, perMinuteUsd: 0.006 } };
  gw = await startGateway(
    [
      ...b.docs,
      secret('openai-key', { key: OPENAI_KEY }),
      route('whisper-1', target('oa', up.baseUrl), pricing),
      route('whisper-storm', target('storm', storm.baseUrl), pricing),
    ],
    { uploads: { parent, aboveBytes: ABOVE } },
  );
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await up?.close();
  await storm?.close();
  if (parent) await rm(parent, { recursive: true, force: true });
});

/** The files waiting in the spool now (every one of the gateway's spool directories under `parent`). */
async function spooled(): Promise<string[]> {
  const entries = await readdir(parent, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

const BOUNDARY = 'spool-test-boundary-42';
const head = (model: string): Buffer =>
  Buffer.from(
    `--${BOUNDARY}\r\ncontent-disposition: form-data; name="model"\r\n\r\n${model}\r\n` +
      `--${BOUNDARY}\r\ncontent-disposition: form-data; name="file"; filename="a.wav"\r\ncontent-type: audio/wav\r\n\r\n`,
  );
const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);

/** A raw upload whose body is `parts`, announced as `length` bytes; resolves with the request (to cut it) and its answer. */
function rawUpload(parts: Buffer[], length: number) {
  const req = request({
    host: new URL(gw.url).hostname,
    port: new URL(gw.url).port,
    method: 'POST',
    path: '/v1/audio/transcriptions',
    headers: { authorization: `Bearer ${key}`, 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'content-length': length },
  });
  const answer = new Promise<{ status: number; body: string } | null>((resolve) => {
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', () => resolve(null));
    });
    req.on('error', () => resolve(null));
  });
  for (const p of parts) req.write(p);
  return { req, answer };
}

describe('audio uploads past the threshold wait in a temporary file', () => {
  it('success: the file is private while the call runs, sent byte for byte from disk, deleted after the answer', async () => {
    let open = (): void => {};
    up.gate = new Promise((r) => (open = r));
    const call = client.audio.transcriptions.create({ file: (await toFile(CLIP, 'clip.wav')) as File, model: 'whisper-1' });
    const before = up.calls.length;
    await until(() => up.calls.length > before, 20_000, 'the upstream got the upload');
    const files = await spooled();
    expect(files).toHaveLength(1);
    const file = files[0] as string;
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(join(file, '..'))).mode & 0o777).toBe(0o700);
    expect((await stat(file)).size).toBe(CLIP.length);
    open();
    up.gate = null;
    const answer = await call;
    expect(answer.text).toBe(TRANSCRIPT);
    expect(up.calls.at(-1)?.file?.bytes.equals(CLIP)).toBe(true);
    expect(gw.sink.events.at(-1)).toMatchObject({ status: 200, unit: 'seconds' });
    // Deleted as the call ends (its settlement follows the answer's last byte).
    await until(async () => (await spooled()).length === 0, 10_000, 'the upload deleted after the answer');
  });

  it('an upstream error, a file that is not audio and a 30 MB upload: the 4xx or 5xx answered, nothing left on disk', async () => {
    up.failWith = 500;
    try {
      await expect(client.audio.transcriptions.create({ file: (await toFile(CLIP, 'clip.wav')) as File, model: 'whisper-1' })).rejects.toMatchObject({
        status: 502,
      });
    } finally {
      up.failWith = null;
    }
    expect(await spooled()).toEqual([]);
    const notAudio = Buffer.alloc(ABOVE * 3, 0x41);
    await expect(client.audio.transcriptions.create({ file: (await toFile(notAudio, 'clip.wav')) as File, model: 'whisper-1' })).rejects.toMatchObject({
      status: 400,
    });
    expect(await spooled()).toEqual([]);
    const calls = up.calls.length;
    const big = Buffer.alloc(30 * 1024 * 1024);
    CLIP.copy(big, 0, 0, 44);
    await expect(client.audio.transcriptions.create({ file: (await toFile(big, 'big.wav')) as File, model: 'whisper-1' })).rejects.toMatchObject({
      status: 413,
    });
    expect(up.calls.length).toBe(calls);
    await until(async () => (await spooled()).length === 0, 10_000, 'the refused upload deleted');
  });

  it('a client that leaves mid-upload: its partial file is deleted and nothing reaches the upstream', async () => {
    const calls = up.calls.length;
    const { req, answer } = rawUpload([head('whisper-1'), CLIP.subarray(0, ABOVE * 2)], head('whisper-1').length + CLIP.length + tail.length);
    await until(async () => (await spooled()).length === 1, 10_000, 'the partial upload spooled');
    req.destroy();
    expect(await answer).toBeNull();
    await until(async () => (await spooled()).length === 0, 10_000, 'the partial upload deleted');
    expect(up.calls.length).toBe(calls);
  });

  it('a client that leaves while the upstream works: the file deleted, the upstream call cancelled, nothing charged', async () => {
    let open = (): void => {};
    up.gate = new Promise((r) => (open = r));
    try {
      const before = up.calls.length;
      const events = gw.sink.events.length;
      const { req, answer } = rawUpload([head('whisper-1'), CLIP, tail], head('whisper-1').length + CLIP.length + tail.length);
      req.end();
      await until(() => up.calls.length > before, 20_000, 'the upstream got the upload');
      expect(await spooled()).toHaveLength(1);
      req.destroy();
      expect(await answer).toBeNull();
      await until(async () => (await spooled()).length === 0, 10_000, 'the upload deleted after the client left');
      await until(() => gw.sink.events.length > events, 10_000, 'the call settled');
      expect(gw.sink.events.at(-1)).toMatchObject({ status: 499, costNano: 0 });
    } finally {
      open();
      up.gate = null;
    }
  });

  it('a disconnect storm (40 uploads cut mid-upload or while the upstream works): no file left, no socket open at the upstream', async () => {
    let open = (): void => {};
    storm.gate = new Promise((r) => (open = r));
    try {
      const length = head('whisper-storm').length + CLIP.length + tail.length;
      const mid = Array.from({ length: 20 }, () => rawUpload([head('whisper-storm'), CLIP.subarray(0, ABOVE * 2)], length));
      const waiting = Array.from({ length: 20 }, () => {
        const u = rawUpload([head('whisper-storm'), CLIP, tail], length);
        u.req.end();
        return u;
      });
      await until(() => storm.calls.length === 20, 60_000, 'every whole upload reached the upstream');
      await until(async () => (await spooled()).length === 40, 60_000, 'every upload spooled');
      for (const u of [...mid, ...waiting]) u.req.destroy();
      expect((await Promise.all([...mid, ...waiting].map((u) => u.answer))).every((a) => a === null)).toBe(true);
      await until(async () => (await spooled()).length === 0, 30_000, 'no upload left in the spool');
      await until(() => storm.sockets() === 0, 30_000, 'no socket left open at the upstream');
      expect(storm.calls.length).toBe(20);
    } finally {
      open();
      storm.gate = null;
    }
  });
});
