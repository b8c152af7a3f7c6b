// MP3 files made in code for the tests of what an MP3 upload is billed: silent MPEG audio frames (side information
// all zero decodes to silence) whose first frame may carry a Xing, Info or VBRI header claiming whatever it is told.

export interface Mp3Spec {
  /** The 4-byte frame header of every frame, e.g. 0xfffb18c0: MPEG-1 Layer III, 32 kbit/s, 32 kHz, mono. */
  header: number;
  /** Bytes per frame (144 x bitrate / sample rate for Layer III). */
  frameBytes: number;
  /** Frames in the file, the tagged first frame included. */
  frames: number;
  /** A tag in the first frame claiming `claimedFrames` frames (and `frames x frameBytes` bytes). */
  tag?: { id: 'Xing' | 'Info' | 'VBRI'; at: number; claimedFrames: number };
}

export function mp3File(spec: Mp3Spec): Buffer {
  const out = Buffer.alloc(spec.frames * spec.frameBytes);
  for (let i = 0; i < spec.frames; i++) out.writeUInt32BE(spec.header, i * spec.frameBytes);
  const tag = spec.tag;
  if (!tag) return out;
  out.write(tag.id, tag.at, 'latin1');
  if (tag.id === 'VBRI') {
    // version 1, delay, quality, then the stream's bytes and frames (big-endian).
    out.writeUInt16BE(1, tag.at + 4);
    out.writeUInt32BE(out.length, tag.at + 10);
    out.writeUInt32BE(tag.claimedFrames, tag.at + 14);
  } else {
    // Flags: the frame count and byte count fields follow.
    out.writeUInt32BE(3, tag.at + 4);
    out.writeUInt32BE(tag.claimedFrames, tag.at + 8);
    out.writeUInt32BE(out.length, tag.at + 12);
  }
  return out;
}

/** MPEG-1 Layer III, 32 kbit/s (the lowest it allows), 32 kHz, mono: 144-byte frames of 1152 samples (36 ms). */
export const LOW_MONO = { header: 0xfffb18c0, frameBytes: 144, xingAt: 4 + 17, frameSeconds: 1152 / 32_000 } as const;
/** MPEG-1 Layer III, 128 kbit/s, 32 kHz, stereo: 576-byte frames of 1152 samples. */
export const MID_STEREO = { header: 0xfffb9800, frameBytes: 576, xingAt: 4 + 32, frameSeconds: 1152 / 32_000 } as const;
/** MPEG-2 Layer III, 64 kbit/s, 16 kHz, mono: 288-byte frames of 576 samples (its lowest bitrate is 8 kbit/s). */
export const V2_MONO = { header: 0xfff388c0, frameBytes: 288, xingAt: 4 + 9, frameSeconds: 576 / 16_000 } as const;
