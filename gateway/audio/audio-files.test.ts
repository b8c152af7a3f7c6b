// What the gateway reads from an upload before it calls anything: the format by magic bytes, the length from the
// file's own header (a WAV checked against its bytes; MP3 by music-metadata), and the multipart upload itself read
// with its bounds and re-sent byte for byte.
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../errors/catalog.ts';
import { silentMp3, toneWav8, wavFile } from '../providers/mock/audio-bytes.ts';
import { audioFacts } from './duration.ts';
import { multipartBody } from './multipart.ts';
import { sniffAudio } from './sniff.ts';
import { readUpload, type UploadedFile } from './upload.ts';
import { memoryBytes } from '../uploads/held-bytes.ts';
import { wavSeconds } from './wav.ts';

const file = (b: Buffer): UploadedFile => ({ data: memoryBytes([b.subarray(0, 10), b.subarray(10)]), bytes: b.length, filename: 'x' });
const ascii = (s: string, pad = 16): Buffer => Buffer.concat([Buffer.from(s, 'latin1'), Buffer.alloc(pad)]);

describe('sniffAudio', () => {
  it('tells each accepted format by its first bytes', () => {
    expect(sniffAudio(toneWav8(0.1))).toBe('wav');
    expect(sniffAudio(ascii('fLaC'))).toBe('flac');
    expect(sniffAudio(ascii('OggS'))).toBe('ogg');
    expect(sniffAudio(ascii('\0\0\0\x20ftypM4A '))).toBe('mp4');
    expect(sniffAudio(Buffer.from([0x1a, 0x45, 0xdf, 0xa3, 0, 0]))).toBe('webm');
    expect(sniffAudio(silentMp3(0.1))).toBe('mp3');
    expect(sniffAudio(Buffer.concat([Buffer.from('ID3\x04\0\0\0\0\0\x02', 'latin1'), Buffer.alloc(2), silentMp3(0.1)]))).toBe('mp3');
  });

  it('refuses what is not audio, whatever it is named', () => {
    expect(sniffAudio(Buffer.from('{"text":"hello"}'))).toBeNull();
    expect(sniffAudio(Buffer.from('%PDF-1.7\n'))).toBeNull();
    expect(sniffAudio(Buffer.from([0xff, 0xff, 0xff, 0xff]))).toBeNull();
    expect(sniffAudio(Buffer.alloc(0))).toBeNull();
  });
});

describe('wavSeconds', () => {
  it('reads the length from the data chunk and the byte rate', async () => {
    expect(await wavSeconds(file(toneWav8(2.5)).data)).toBe(2.5);
    expect(await wavSeconds(memoryBytes([wavFile(Buffer.alloc(48_000), 24_000)]))).toBe(1);
  });

  it('bills a header that claims more than the file holds on the bytes received', async () => {
    const wav = toneWav8(1);
    wav.writeUInt32LE(3600 * 8000, 40);
    expect(await wavSeconds(memoryBytes([wav]))).toBe(1);
    wav.writeUInt32LE(0xffffffff, 40);
    expect(await wavSeconds(memoryBytes([wav]))).toBe(1);
  });

  it('accepts whole chunks after the audio, refuses audio hidden beyond the declared length', async () => {
    const list = Buffer.concat([Buffer.from('LIST', 'latin1'), Buffer.from([4, 0, 0, 0]), Buffer.from('INFO', 'latin1')]);
    expect(await wavSeconds(memoryBytes([toneWav8(1), list]))).toBe(1);
    const hidden = toneWav8(5);
    hidden.writeUInt32LE(8000, 40);
    await expect(wavSeconds(memoryBytes([hidden]))).rejects.toThrow(/declares 8000 bytes of audio/);
  });

  it('refuses a byte rate that disagrees with the format (a shorter length than the audio)', async () => {
    const wav = toneWav8(1);
    wav.writeUInt32LE(80_000, 28);
    await expect(wavSeconds(memoryBytes([wav]))).rejects.toThrow(GatewayError);
  });
});

describe('audioFacts', () => {
  it('reads an MP3 length from its frames (music-metadata), billed by the started second', async () => {
    const f = await audioFacts(file(silentMp3(2)));
    expect(f.format).toBe('mp3');
    expect(f.seconds).toBeCloseTo((77 * 1152) / 44_100, 3);
    expect(f.billedSeconds).toBe(3);
  });

  it('refuses a file that is not audio with a 400 on the file', async () => {
    const err = await audioFacts(file(Buffer.from('not audio at all'))).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).status).toBe(400);
  });

  it('the demo clip is the generator’s one-second tone', () => {
    expect(readFileSync(new URL('../config/demo-clip.wav', import.meta.url)).equals(toneWav8(1))).toBe(true);
  });
});

describe('readUpload and multipartBody', () => {
  const fields: Array<[string, string]> = [
    ['model', 'whisper-1'],
    ['timestamp_granularities[]', 'word'],
    ['timestamp_granularities[]', 'segment'],
    ['prompt', 'quote " and\r\nnew line'],
  ];
  const upload = async (body: ReturnType<typeof multipartBody>, max?: number) =>
    readUpload(Readable.from(body.body()), body.contentType, max === undefined ? undefined : { maxFileBytes: max });

  it('reads what multipartBody writes: the fields in order, the file byte for byte, the length announced', async () => {
    const audio = toneWav8(0.5);
    const body = multipartBody(fields, file(audio), 'audio.wav', 'audio/wav');
    let n = 0;
    for await (const c of body.body()) n += c.length;
    expect(n).toBe(body.length);
    const up = await upload(body);
    expect(up.fields).toEqual(fields);
    expect((await up.file.data.whole()).equals(audio)).toBe(true);
  });

  it('refuses a file above the cap with a 413, a missing file and a wrong content type with a 400', async () => {
    const big = multipartBody([['model', 'm']], file(Buffer.alloc(5000)), 'a.wav', 'audio/wav');
    await expect(upload(big, 4096)).rejects.toMatchObject({ status: 413 });
    const none = multipartBody([['model', 'm']], { data: memoryBytes([]), bytes: 0, filename: 'a' }, 'a.wav', 'audio/wav');
    await expect(upload(none)).rejects.toMatchObject({ status: 400, param: 'file' });
    await expect(readUpload(Readable.from([Buffer.from('{}')]), 'application/json')).rejects.toMatchObject({ status: 400 });
  });
});
