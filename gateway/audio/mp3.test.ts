// The ceiling on an MP3 upload's seconds: an Info (CBR) file's bytes at its first frame's bitrate, a Xing, VBRI or
// untagged file's bytes at the lowest bitrate of its MPEG version and layer; audioFacts bills the smaller of that and
// what the header claims.
import { describe, expect, it } from 'vitest';
import { LOW_MONO, MID_STEREO, V2_MONO, mp3File } from '../../test/helpers/mp3-bytes.ts';
import { silentMp3 } from '../providers/mock/audio-bytes.ts';
import { memoryBytes } from '../uploads/held-bytes.ts';
import { audioFacts } from './duration.ts';
import { mp3SecondsCeiling } from './mp3.ts';

const held = (b: Buffer) => memoryBytes([b.subarray(0, 7), b.subarray(7)]);
const HOUR_OF = (frameSeconds: number): number => Math.ceil(3600 / frameSeconds);

describe('mp3SecondsCeiling', () => {
  it('an Info (CBR) header: the bytes at the first frame bitrate', async () => {
    const b = mp3File({ ...MID_STEREO, frames: 50, tag: { id: 'Info', at: MID_STEREO.xingAt, claimedFrames: 9 } });
    expect(await mp3SecondsCeiling(held(b))).toBeCloseTo((50 * 576 * 8) / 128_000, 9);
  });

  it('a Xing or VBRI header, or none: the bytes at the lowest bitrate of the version and layer', async () => {
    const xing = mp3File({ ...MID_STEREO, frames: 50, tag: { id: 'Xing', at: MID_STEREO.xingAt, claimedFrames: 9 } });
    expect(await mp3SecondsCeiling(held(xing))).toBeCloseTo((50 * 576 * 8) / 32_000, 9);
    const vbri = mp3File({ ...MID_STEREO, frames: 50, tag: { id: 'VBRI', at: 36, claimedFrames: 9 } });
    expect(await mp3SecondsCeiling(held(vbri))).toBeCloseTo((50 * 576 * 8) / 32_000, 9);
    const v2 = mp3File({ ...V2_MONO, frames: 10, tag: { id: 'Xing', at: V2_MONO.xingAt, claimedFrames: 9 } });
    expect(await mp3SecondsCeiling(held(v2))).toBeCloseTo((10 * 288 * 8) / 8_000, 9);
    expect(await mp3SecondsCeiling(held(mp3File({ ...V2_MONO, frames: 10 })))).toBeCloseTo((10 * 288 * 8) / 8_000, 9);
  });

  it('skips the ID3v2 tag before the audio and the ID3v1 tag after it', async () => {
    const id3 = Buffer.concat([Buffer.from('ID3\x04\0\0\0\0\0\x14', 'latin1'), Buffer.alloc(20)]);
    const v1 = Buffer.concat([Buffer.from('TAG', 'latin1'), Buffer.alloc(125)]);
    const audio = mp3File({ ...LOW_MONO, frames: 10, tag: { id: 'Info', at: LOW_MONO.xingAt, claimedFrames: 1000 } });
    expect(await mp3SecondsCeiling(held(Buffer.concat([id3, audio, v1])))).toBeCloseTo((10 * 144 * 8) / 32_000, 9);
  });
});

describe('audioFacts on an MP3 whose header lies', () => {
  it('a Xing frame count of an hour on 27 frames at 32 kbit/s: the seconds the bytes hold', async () => {
    const b = mp3File({ ...LOW_MONO, frames: 27, tag: { id: 'Xing', at: LOW_MONO.xingAt, claimedFrames: HOUR_OF(LOW_MONO.frameSeconds) } });
    const f = await audioFacts({ data: held(b), bytes: b.length, filename: 'x.mp3' });
    expect(f.seconds).toBeCloseTo(27 * LOW_MONO.frameSeconds, 9);
    expect(f.billedSeconds).toBe(1);
  });

  it('an Info header claiming an hour: the bytes at its bitrate', async () => {
    const b = mp3File({ ...MID_STEREO, frames: 100, tag: { id: 'Info', at: MID_STEREO.xingAt, claimedFrames: HOUR_OF(MID_STEREO.frameSeconds) } });
    const f = await audioFacts({ data: held(b), bytes: b.length, filename: 'x.mp3' });
    expect(f.seconds).toBeCloseTo(100 * MID_STEREO.frameSeconds, 9);
    expect(f.billedSeconds).toBe(4);
  });

  it('an honest header is billed as it claims (the ceiling is above it)', async () => {
    const b = mp3File({ ...MID_STEREO, frames: 100, tag: { id: 'Xing', at: MID_STEREO.xingAt, claimedFrames: 100 } });
    expect((await audioFacts({ data: held(b), bytes: b.length, filename: 'x.mp3' })).seconds).toBeCloseTo(100 * MID_STEREO.frameSeconds, 9);
    const plain = silentMp3(2);
    expect((await audioFacts({ data: held(plain), bytes: plain.length, filename: 'x.mp3' })).seconds).toBeCloseTo((77 * 1152) / 44_100, 9);
  });
});
