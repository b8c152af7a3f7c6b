// The audio endpoints through the gateway with the official openai SDK: transcriptions in every response_format,
// streamed and not, translations, speech streamed through to a file and as speech.audio.* events; to fakes speaking
// OpenAI's and Azure OpenAI's wire formats (multipart in, binary and event streams out). Money is exact (seconds,
// characters or tokens times the price), the hold is priced on the file's own length (a WAV or MP3 that lies about it
// is not billed on the lie), bad input is a 4xx in OpenAI's shape before any upstream call with nothing charged, and
// every answer OpenAI describes validates against its published OpenAPI description.
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toneWav8 } from '../../gateway/providers/mock/audio-bytes.ts';
import { SseParser } from '../../gateway/sse/parser.ts';
import { AZURE_KEY, OPENAI_KEY, TRANSCRIPT, startAudioUpstream, type AudioUpstream } from '../fakes/audio-upstream.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { LOW_MONO, mp3File } from '../helpers/mp3-bytes.ts';
import { freePort } from '../helpers/host.ts';
import { apiKey, basics, route, secret, type TargetSpec } from '../helpers/manifests.ts';
import { eventSchemaOf, expectConforms } from '../helpers/openapi.ts';

let up: AudioUpstream;
let gw: TestGateway;
let client: OpenAI;
let key: string;
let dir: string;

// Prices in nano-USD: whisper 0.006 USD a minute (100,000 a second), tts-1 15 USD per million characters,
// gpt-4o-transcribe 2.5 / 6 / 10 USD per million text-in / audio-in / out tokens, gpt-4o-mini-tts 0.6 / 12.
const PER_SECOND = 100_000;
const PER_CHAR = 15_000;
const T_TEXT = 2_500;
const T_AUDIO = 6_000;
const T_OUT = 10_000;
const TTS_IN = 600;
const TTS_OUT = 12_000;

/** 2.5 s of audio: billed 3 s. */
const CLIP = toneWav8(2.5);
const CLIP_HOLD = 3 * PER_SECOND;
const BURST = 5;
const burstKey = apiKey('burst-key', 'acme', { monthlyBudgetUsd: ((BURST - 1) * CLIP_HOLD) / 1e9 });
const smallKey = apiKey('small-key', 'acme', { monthlyBudgetUsd: (2 * PER_SECOND) / 1e9 });
const mp3Key = apiKey('mp3-key', 'acme', { monthlyBudgetUsd: (2 * PER_SECOND) / 1e9 });

beforeAll(async () => {
  up = await startAudioUpstream();
  dir = await mkdtemp(join(tmpdir(), 'svc-audio-'));
  const b = basics();
  key = b.keys.builder;
  const openai = (name: string, upstreamModel: string): TargetSpec[] => [
    { name, provider: 'openai', baseUrl: up.baseUrl, upstreamModel, credentials: { secretKeyRef: { name: 'openai-key', key: 'key' } } },
  ];
  const azure = (name: string, upstreamModel: string, apiVersion?: string): TargetSpec[] => [
    {
      name,
      provider: 'azure-openai',
      baseUrl: up.url,
      upstreamModel,
      ...(apiVersion ? { apiVersion } : {}),
      credentials: { secretKeyRef: { name: 'azure-key', key: 'api-key' } },
    },
  ];
  const deadPort = await freePort();
  gw = await startGateway([
    ...b.docs,
    ...burstKey.docs,
    ...smallKey.docs,
    ...mp3Key.docs,
    secret('openai-key', { key: OPENAI_KEY }),
    secret('azure-key', { 'api-key': AZURE_KEY }),
    route('whisper-1', openai('oa-whisper', 'whisper-1'), { type: 'transcription', pricing: { inputPerMTokUsd: 0, perMinuteUsd: 0.006 } }),
    route('gpt-4o-transcribe', openai('oa-4o', 'gpt-4o-transcribe'), {
      type: 'transcription',
      pricing: { inputPerMTokUsd: 2.5, audioInputPerMTokUsd: 6, outputPerMTokUsd: 10 },
    }),
    route('azure-whisper', azure('az-whisper', 'whisper-dep', '2024-06-01'), { type: 'transcription', pricing: { inputPerMTokUsd: 0, perMinuteUsd: 0.006 } }),
    route('tts-1', openai('oa-tts', 'tts-1'), { type: 'speech', pricing: { inputPerMTokUsd: 0, perMCharactersUsd: 15 } }),
    route('gpt-4o-mini-tts', openai('oa-4o-tts', 'gpt-4o-mini-tts'), {
      type: 'speech',
      maxOutputTokens: 2000,
      pricing: { inputPerMTokUsd: 0.6, outputPerMTokUsd: 12 },
    }),
    route('azure-tts', azure('az-tts', 'tts-dep'), { type: 'speech', pricing: { inputPerMTokUsd: 0, perMCharactersUsd: 15 } }),
    route('gpt-chat', openai('chat-a', 'gpt-4o')),
    // Nothing listens on the first target: the call falls back to the second (weight 0: tried last) with the same upload.
    route(
      'whisper-fb',
      [
        { name: 'dead', provider: 'openai', baseUrl: `http://127.0.0.1:${deadPort}/v1`, upstreamModel: 'whisper-1', timeouts: { connectMs: 1000 } },
        { ...openai('backup', 'whisper-1')[0], weight: 0 } as TargetSpec,
      ],
      { type: 'transcription', pricing: { inputPerMTokUsd: 0, perMinuteUsd: 0.006 } },
    ),
  ]);
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await up?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const clip = (bytes: Buffer = CLIP, name = 'clip.wav'): Promise<File> => toFile(bytes, name) as Promise<File>;

async function spendOf(auth: string): Promise<number> {
  const r = await fetch(`${gw.url}/v1/me`, { headers: { authorization: `Bearer ${auth}` } });
  return Math.round(((await r.json()) as { month_spend_usd: number }).month_spend_usd * 1e9);
}

function lastEvent(): NonNullable<TestGateway['sink']['events'][number]> {
  const e = gw.sink.events.at(-1);
  if (!e) throw new Error('no usage event');
  return e;
}

function field(name: string, i = -1): string | undefined {
  return new Map(up.calls.at(i)?.fields).get(name);
}

describe('POST /v1/audio/transcriptions', () => {
  it('json (openai SDK): the file re-sent as multipart with the upstream model, billed on the seconds the file holds', async () => {
    const { data, response } = await client.audio.transcriptions
      .create({ file: await clip(), model: 'whisper-1', language: 'en', prompt: 'beach' })
      .withResponse();
    expectConforms('CreateTranscriptionResponseJson', data);
    expect(data.text).toBe(TRANSCRIPT);
    expect(response.headers.get('x-svc-upstream')).toBe('oa-whisper');
    const sent = up.calls.at(-1);
    expect(sent?.path).toBe('/v1/audio/transcriptions');
    expect(sent?.file?.bytes.equals(CLIP)).toBe(true);
    expect(sent?.file?.name).toBe('audio.wav');
    expect(sent?.file?.type).toBe('audio/wav');
    expect(field('model')).toBe('whisper-1');
    expect(field('language')).toBe('en');
    expect(field('prompt')).toBe('beach');
    expect(lastEvent()).toMatchObject({
      endpoint: 'audio.transcriptions',
      requestedModel: 'whisper-1',
      status: 200,
      unit: 'seconds',
      units: 3,
      costNano: CLIP_HOLD,
    });
  });

  it.each(['text', 'srt', 'vtt'] as const)('%s (openai SDK): the text passed through, billed per second', async (format) => {
    const before = await spendOf(key);
    const text = await client.audio.transcriptions.create({ file: await clip(), model: 'whisper-1', response_format: format });
    expect(typeof text).toBe('string');
    expect(text).toContain(TRANSCRIPT);
    if (format === 'vtt') expect(text.startsWith('WEBVTT')).toBe(true);
    if (format === 'srt') expect(text).toContain('00:00:00,000 --> 00:00:02,500');
    expect(field('response_format')).toBe(format);
    expect(await spendOf(key)).toBe(before + CLIP_HOLD);
  });

  it('verbose_json with timestamp_granularities[] (openai SDK): words and segments, a conforming answer', async () => {
    const data = await client.audio.transcriptions.create({
      file: await clip(),
      model: 'whisper-1',
      response_format: 'verbose_json',
      timestamp_granularities: ['word', 'segment'],
    });
    expectConforms('CreateTranscriptionResponseVerboseJson', data);
    expect(data.words?.[0]?.word).toBe('The');
    expect(
      up.calls
        .at(-1)
        ?.fields.filter(([k]) => k === 'timestamp_granularities[]')
        .map(([, v]) => v),
    ).toEqual(['word', 'segment']);
    expect(lastEvent()).toMatchObject({ units: 3, costNano: CLIP_HOLD });
  });

  it('gpt-4o-transcribe: billed on the tokens it reports (text and audio input, output), exactly', async () => {
    const data = await client.audio.transcriptions.create({ file: await clip(), model: 'gpt-4o-transcribe', include: ['logprobs'] });
    expectConforms('CreateTranscriptionResponseJson', data);
    expect(up.calls.at(-1)?.fields).toContainEqual(['include[]', 'logprobs']);
    const u = up.usage;
    expect(lastEvent()).toMatchObject({ inputTokens: u.textTokens + u.audioTokens, outputTokens: u.outputTokens, usageEstimated: false, usageClamped: false });
    expect(lastEvent().costNano).toBe(u.textTokens * T_TEXT + u.audioTokens * T_AUDIO + u.outputTokens * T_OUT);
  });

  it('streams (openai SDK, stream: true): transcript.text.delta events then done with usage, charged exactly', async () => {
    const stream = await client.audio.transcriptions.create({ file: await clip(), model: 'gpt-4o-transcribe', stream: true });
    let text = '';
    let done = false;
    for await (const e of stream) {
      const schema = eventSchemaOf('CreateTranscriptionResponseStreamEvent', e.type);
      expect(schema).not.toBeNull();
      expectConforms(schema as string, e);
      if (e.type === 'transcript.text.delta') text += e.delta;
      if (e.type === 'transcript.text.done') done = true;
    }
    expect(done).toBe(true);
    expect(text.trim()).toBe(TRANSCRIPT);
    expect(field('stream')).toBe('true');
    const u = up.usage;
    expect(lastEvent()).toMatchObject({ stream: true, status: 200, costNano: u.textTokens * T_TEXT + u.audioTokens * T_AUDIO + u.outputTokens * T_OUT });
  });

  it('Azure OpenAI (dated API): the deployment path, api-version and api-key; the deployment as model', async () => {
    const data = await client.audio.transcriptions.create({ file: await clip(), model: 'azure-whisper' });
    expect(data.text).toBe(TRANSCRIPT);
    const sent = up.calls.at(-1);
    expect(sent?.path).toBe('/openai/deployments/whisper-dep/audio/transcriptions');
    expect(sent?.query.get('api-version')).toBe('2024-06-01');
    expect(sent?.headers['api-key']).toBe(AZURE_KEY);
    expect(sent?.headers.authorization).toBeUndefined();
    expect(lastEvent()).toMatchObject({ upstream: 'az-whisper', costNano: CLIP_HOLD });
  });
});

describe('fallback', () => {
  it('an upstream that cannot be reached: the next target gets the same upload, the headers say so, one charge', async () => {
    const before = await spendOf(key);
    const { data, response } = await client.audio.transcriptions.create({ file: await clip(), model: 'whisper-fb' }).withResponse();
    expect(data.text).toBe(TRANSCRIPT);
    expect(response.headers.get('x-svc-upstream')).toBe('backup');
    expect(response.headers.get('x-svc-fallback')).toBe('true');
    expect(response.headers.get('x-svc-fallback-reason')).toBe('connect_error');
    expect(up.calls.at(-1)?.file?.bytes.equals(CLIP)).toBe(true);
    expect(lastEvent()).toMatchObject({ upstream: 'backup', fallback: true, fallbackReason: 'connect_error', costNano: CLIP_HOLD });
    expect(await spendOf(key)).toBe(before + CLIP_HOLD);
  });

  it('an upstream that refuses the request (400): passed on in OpenAI’s shape, nothing charged', async () => {
    const before = await spendOf(key);
    up.failWith = 400;
    try {
      const err = await client.audio.transcriptions.create({ file: await clip(), model: 'whisper-1' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      expect((err as Error).message).toContain('failing with 400');
    } finally {
      up.failWith = null;
    }
    expect(lastEvent()).toMatchObject({ status: 400, costNano: 0 });
    expect(await spendOf(key)).toBe(before);
  });
});

describe('POST /v1/audio/translations', () => {
  it('translates (openai SDK): json and verbose_json conform, billed per second', async () => {
    const data = await client.audio.translations.create({ file: await clip(), model: 'whisper-1' });
    expectConforms('CreateTranslationResponseJson', data);
    expect(up.calls.at(-1)?.path).toBe('/v1/audio/translations');
    expect(lastEvent()).toMatchObject({ endpoint: 'audio.translations', unit: 'seconds', costNano: CLIP_HOLD });
    const verbose = await client.audio.translations.create({ file: await clip(), model: 'whisper-1', response_format: 'verbose_json' });
    expectConforms('CreateTranslationResponseVerboseJson', verbose);
  });
});

describe('POST /v1/audio/speech', () => {
  it('streams the audio through to a file as it comes (openai SDK), with its content type; billed per character', async () => {
    up.chunkDelayMs = 20;
    try {
      const response = await client.audio.speech
        .create({ model: 'tts-1', input: 'Hello, world!', voice: 'alloy', response_format: 'opus', speed: 1.25 })
        .asResponse();
      expect(response.headers.get('content-type')).toBe('audio/opus');
      expect(response.headers.get('x-svc-upstream')).toBe('oa-tts');
      const out = join(dir, 'speech.opus');
      await pipeline(Readable.fromWeb(response.body as import('node:stream/web').ReadableStream), createWriteStream(out));
      expect((await readFile(out)).equals(up.speechBytes)).toBe(true);
    } finally {
      up.chunkDelayMs = 0;
    }
    expect(up.calls.at(-1)?.json).toMatchObject({ model: 'tts-1', input: 'Hello, world!', voice: 'alloy', response_format: 'opus', speed: 1.25 });
    expect(lastEvent()).toMatchObject({ endpoint: 'audio.speech', unit: 'characters', units: 13, costNano: 13 * PER_CHAR });
  });

  it('stream_format sse: speech.audio.delta events then done with usage, billed on its tokens', async () => {
    const response = await client.audio.speech
      .create({ model: 'gpt-4o-mini-tts', input: 'Hi there', voice: 'coral', instructions: 'Cheerful.', stream_format: 'sse' })
      .asResponse();
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const parser = new SseParser();
    const events = parser.push(await response.text()).map((e) => JSON.parse(e.data) as { type: string; audio?: string });
    for (const e of events) expectConforms(eventSchemaOf('CreateSpeechResponseStreamEvent', e.type) as string, e);
    const audio = Buffer.concat(events.filter((e) => e.type === 'speech.audio.delta').map((e) => Buffer.from(e.audio ?? '', 'base64')));
    expect(audio.equals(up.speechBytes)).toBe(true);
    expect(events.at(-1)?.type).toBe('speech.audio.done');
    const u = up.usage;
    expect(lastEvent()).toMatchObject({ stream: true, inputTokens: u.speechInput, outputTokens: u.speechOutput, usageEstimated: false });
    expect(lastEvent().costNano).toBe(u.speechInput * TTS_IN + u.speechOutput * TTS_OUT);
  });

  it('Azure OpenAI (v1 API): /openai/v1/audio/speech with the deployment as model', async () => {
    const response = await client.audio.speech.create({ model: 'azure-tts', input: 'abc', voice: 'alloy' }).asResponse();
    expect(Buffer.from(await response.arrayBuffer()).equals(up.speechBytes)).toBe(true);
    expect(up.calls.at(-1)?.path).toBe('/openai/v1/audio/speech');
    expect(up.calls.at(-1)?.json?.model).toBe('tts-dep');
    expect(lastEvent()).toMatchObject({ upstream: 'az-tts', costNano: 3 * PER_CHAR });
  });

  it('refuses bad input with a 400 naming the field: no upstream call, nothing charged', async () => {
    const calls = up.calls.length;
    const before = await spendOf(key);
    for (const [body, param] of [
      [{ model: 'tts-1', voice: 'alloy' }, 'input'],
      [{ model: 'tts-1', input: 'x'.repeat(4097), voice: 'alloy' }, 'input'],
      [{ model: 'tts-1', input: 'hi', voice: 'alloy', response_format: 'ogg' }, 'response_format'],
      [{ model: 'tts-1', input: 'hi', voice: 'alloy', speed: 9 }, 'speed'],
      [{ model: 'whisper-1', input: 'hi', voice: 'alloy' }, 'model'],
    ] as const) {
      const res = await fetch(`${gw.url}/v1/audio/speech`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(400);
      const err = (await res.json()) as { error: { param: string } };
      expectConforms('ErrorResponse', err);
      expect(err.error.param).toBe(param);
    }
    expect(up.calls.length).toBe(calls);
    expect(await spendOf(key)).toBe(before);
  });
});

describe('bad uploads: a clear 4xx before any upstream call, nothing charged', () => {
  async function refused(make: () => Promise<unknown>, status: number, message: RegExp): Promise<void> {
    const calls = up.calls.length;
    const before = await spendOf(key);
    const err = await make().then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(OpenAI.APIError);
    const e = err as InstanceType<typeof OpenAI.APIError>;
    expect(e.status).toBe(status);
    expectConforms('ErrorResponse', e.error === undefined ? {} : { error: e.error });
    expect(e.message).toMatch(message);
    expect(up.calls.length).toBe(calls);
    expect(await spendOf(key)).toBe(before);
  }

  it('a 30 MB upload: 413', async () => {
    const big = Buffer.alloc(30 * 1024 * 1024);
    CLIP.copy(big);
    await refused(async () => client.audio.transcriptions.create({ file: await clip(big), model: 'whisper-1' }), 413, /larger than 25 MB/);
  });

  it('a file that is not audio (whatever its name says): 400', async () => {
    await refused(
      async () => client.audio.transcriptions.create({ file: await clip(Buffer.from('{"not": "audio"}'), 'clip.mp3'), model: 'whisper-1' }),
      400,
      /not audio/,
    );
  });

  it('a wrong content type, a missing file part: 400', async () => {
    await refused(() => client.post('/audio/transcriptions', { body: { model: 'whisper-1' } }), 400, /multipart\/form-data/);
    const form = new FormData();
    form.set('model', 'whisper-1');
    await refused(() => client.post('/audio/transcriptions', { body: form }), 400, /part named 'file'/);
  });

  it('a WAV whose data chunk hides more audio than it declares: 400', async () => {
    const wav = toneWav8(5);
    wav.writeUInt32LE(8000, 40);
    await refused(async () => client.audio.transcriptions.create({ file: await clip(wav), model: 'whisper-1' }), 400, /no chunk/);
  });

  it('a chat model, a field out of range: 400 naming it', async () => {
    await refused(async () => client.audio.transcriptions.create({ file: await clip(), model: 'gpt-chat' }), 400, /chat model/);
    await refused(async () => client.audio.transcriptions.create({ file: await clip(), model: 'whisper-1', temperature: 3 }), 400, /temperature/);
  });
});

describe('money', () => {
  it('a WAV whose header claims a minute but holds one second is held and billed on the second', async () => {
    const wav = toneWav8(1);
    wav.writeUInt32LE(60 * 8000, 40);
    wav.writeUInt32LE(36 + 60 * 8000, 4);
    // The key's budget fits 2 seconds: a hold on the header's 60 s would be refused (402).
    const small = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: smallKey.key, maxRetries: 0 });
    const data = await small.audio.transcriptions.create({ file: await clip(wav), model: 'whisper-1' });
    expect(data.text).toBe(TRANSCRIPT);
    expect(up.calls.at(-1)?.file?.bytes.length).toBe(wav.length);
    // The fake reports 3 s: the charge is held to the second the file holds.
    expect(lastEvent()).toMatchObject({ units: 1, costNano: PER_SECOND, usageClamped: true });
    expect(await spendOf(smallKey.key)).toBe(PER_SECOND);
  });

  it('an MP3 whose Xing header claims an hour on under a second of frames is held and billed on its bytes', async () => {
    // 27 silent frames at 32 kbit/s (0.972 s); the Xing frame count says an hour, which music-metadata believes.
    const claimed = Math.ceil(3600 / LOW_MONO.frameSeconds);
    const mp3 = mp3File({ ...LOW_MONO, frames: 27, tag: { id: 'Xing', at: LOW_MONO.xingAt, claimedFrames: claimed } });
    const before = await spendOf(mp3Key.key);
    const small = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: mp3Key.key, maxRetries: 0 });
    const data = await small.audio.transcriptions.create({ file: await clip(mp3, 'clip.mp3'), model: 'whisper-1' });
    expect(data.text).toBe(TRANSCRIPT);
    expect(up.calls.at(-1)?.file?.bytes.equals(mp3)).toBe(true);
    // The fake reports 3 s: the charge is held to the second the bytes can hold at the lowest bitrate.
    expect(lastEvent()).toMatchObject({ units: 1, costNano: PER_SECOND, usageClamped: true });
    expect((await spendOf(mp3Key.key)) - before).toBe(PER_SECOND);
  });

  it(`${BURST} concurrent transcriptions against a budget that fits ${BURST - 1} admit exactly ${BURST - 1}`, async () => {
    let release = (): void => {};
    up.gate = new Promise((resolve) => (release = resolve));
    const calls = up.calls.length;
    const burst = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: burstKey.key, maxRetries: 0 });
    const pending = Array.from({ length: BURST }, async () =>
      burst.audio.transcriptions.create({ file: await clip(), model: 'whisper-1' }).then(
        () => 200,
        (e: unknown) => (e as { status?: number }).status ?? 0,
      ),
    );
    try {
      await new Promise((r) => setTimeout(r, 50));
      for (let i = 0; i < 400 && up.calls.length < calls + BURST - 1; i++) await new Promise((r) => setTimeout(r, 25));
    } finally {
      up.gate = null;
      release();
    }
    const statuses = await Promise.all(pending);
    expect(statuses.filter((s) => s === 200)).toHaveLength(BURST - 1);
    expect(statuses.filter((s) => s === 402)).toHaveLength(1);
    expect(up.calls.length).toBe(calls + BURST - 1);
    expect(await spendOf(burstKey.key)).toBe((BURST - 1) * CLIP_HOLD);
  });
});
