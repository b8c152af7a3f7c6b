// The most seconds an MP3 upload's bytes can hold, a ceiling on the length its own header claims (duration.ts bills
// the smaller). A Xing or VBRI header carries a frame count that a file can set to anything, and an Info (CBR)
// header's LAME length likewise: without this ceiling a 10 kB file claiming an hour would be held for an hour. An
// Info file is constant bitrate, so its bytes at the first frame's bitrate are its length; a Xing, VBRI or untagged
// file may vary, so its bytes at the lowest bitrate its MPEG version and layer allow are the most it can hold.
// The first frame is where sniff.ts found it: right after the ID3v2 tags, if any.
import type { Bytes } from './wav.ts';

/** kbit/s by bitrate index 1..14, for [MPEG-1, MPEG-2 and 2.5] x [layer I, II, III]. */
const KBPS: Record<'v1' | 'v2', Record<1 | 2 | 3, readonly number[]>> = {
  v1: {
    1: [32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],
    2: [32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],
    3: [32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
  },
  v2: {
    1: [32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],
    2: [8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
    3: [8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
  },
};
/** Below any MPEG audio's bitrate: the ceiling when no frame header can be read where one should be. */
const LOWEST_ANY_BPS = 8000;
/** ID3v2 tags read before the audio: files carry one, rarely two; each is a read of the (possibly spooled) file. */
const MAX_TAGS = 8;

interface FrameHeader {
  version: 'v1' | 'v2';
  layer: 1 | 2 | 3;
  bitrateBps: number;
  mono: boolean;
  crc: boolean;
}

function frameHeader(b: Buffer, at: number): FrameHeader | null {
  if (at + 4 > b.length || b[at] !== 0xff) return null;
  const b1 = b[at + 1] as number;
  const b2 = b[at + 2] as number;
  const versionBits = (b1 >> 3) & 3;
  const layerBits = (b1 >> 1) & 3;
  const index = b2 >> 4;
  if ((b1 & 0xe0) !== 0xe0 || versionBits === 1 || layerBits === 0 || index === 0 || index === 15 || ((b2 >> 2) & 3) === 3) return null;
  const version = versionBits === 3 ? 'v1' : 'v2';
  const layer = (4 - layerBits) as 1 | 2 | 3;
  return { version, layer, bitrateBps: (KBPS[version][layer][index - 1] as number) * 1000, mono: (b[at + 3] as number) >> 6 === 3, crc: (b1 & 1) === 0 };
}

/** Where the tag of a first frame sits: after the side information (Xing, Info) or at a fixed 36 bytes (VBRI). */
function tagOf(b: Buffer, at: number, h: FrameHeader): 'Info' | 'Xing' | 'VBRI' | null {
  const side = h.layer !== 3 ? 0 : h.version === 'v1' ? (h.mono ? 17 : 32) : h.mono ? 9 : 17;
  for (const off of h.crc ? [4 + side, 6 + side] : [4 + side]) {
    const id = b.toString('latin1', at + off, at + off + 4);
    if (id === 'Info' || id === 'Xing') return id;
  }
  return b.toString('latin1', at + 36, at + 40) === 'VBRI' ? 'VBRI' : null;
}

/** The ID3v2 tags before the audio (their sizes are syncsafe; a footer adds 10 bytes). */
async function audioStart(file: Bytes): Promise<number> {
  let at = 0;
  for (let n = 0; n < MAX_TAGS; n++) {
    const h = await file.slice(at, at + 10);
    if (h.length < 10 || h.toString('latin1', 0, 3) !== 'ID3') return at;
    const size = ((h[6] as number) << 21) | ((h[7] as number) << 14) | ((h[8] as number) << 7) | (h[9] as number);
    at += 10 + size + ((h[5] as number) & 0x10 ? 10 : 0);
  }
  return at;
}

export async function mp3SecondsCeiling(file: Bytes): Promise<number> {
  const start = await audioStart(file);
  const head = await file.slice(start, start + 64);
  // An ID3v1 tag (128 bytes starting "TAG") at the end is not audio.
  const tail = file.length >= start + 128 ? await file.slice(file.length - 128, file.length - 125) : Buffer.alloc(0);
  const bits = Math.max(0, file.length - start - (tail.toString('latin1') === 'TAG' ? 128 : 0)) * 8;
  const h = frameHeader(head, 0);
  if (!h) return bits / LOWEST_ANY_BPS;
  return bits / (tagOf(head, 0, h) === 'Info' ? h.bitrateBps : (KBPS[h.version][h.layer][0] as number) * 1000);
}
