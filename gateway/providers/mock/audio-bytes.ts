// Audio the mock provider answers with, made in code: a WAV tone, raw PCM (OpenAI's speech pcm: 24 kHz, 16-bit
// signed little-endian, mono), and MP3 made of silent MPEG-1 Layer III frames (a frame whose side information is all
// zero decodes to silence). Also the source of the demo clip gateway/config/demo-clip.wav (toneWav8(1), checked by a test).

/** A sine tone as 16-bit signed little-endian mono samples. */
export function pcmTone(seconds: number, sampleRate = 24_000, hz = 440): Buffer {
  const n = Math.round(seconds * sampleRate);
  const out = Buffer.alloc(n * 2);
  for (let i = 0; i < n; i++) out.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * hz * i) / sampleRate)), i * 2);
  return out;
}

/** A WAV file (PCM) around 16-bit mono samples, or 8-bit unsigned when `bits` is 8. */
export function wavFile(samples: Buffer, sampleRate: number, bits: 8 | 16 = 16): Buffer {
  const blockAlign = bits / 8;
  const h = Buffer.alloc(44);
  h.write('RIFF', 0, 'latin1');
  h.writeUInt32LE(36 + samples.length, 4);
  h.write('WAVEfmt ', 8, 'latin1');
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(1, 22);
  h.writeUInt32LE(sampleRate, 24);
  h.writeUInt32LE(sampleRate * blockAlign, 28);
  h.writeUInt16LE(blockAlign, 32);
  h.writeUInt16LE(bits, 34);
  h.write('data', 36, 'latin1');
  h.writeUInt32LE(samples.length, 40);
  return Buffer.concat([h, samples]);
}

/** 8-bit unsigned samples of a tone: the smallest honest WAV (8 kB a second at 8 kHz). */
export function toneWav8(seconds: number, sampleRate = 8000, hz = 440): Buffer {
  const n = Math.round(seconds * sampleRate);
  const s = Buffer.alloc(n);
  for (let i = 0; i < n; i++) s[i] = 128 + Math.round(40 * Math.sin((2 * Math.PI * hz * i) / sampleRate));
  return wavFile(s, sampleRate, 8);
}

/** MPEG-1 Layer III, 128 kbit/s, 44.1 kHz, mono: 417-byte frames of 1152 samples. */
const MP3_FRAME_BYTES = 417;
const MP3_FRAME_SECONDS = 1152 / 44_100;

export function silentMp3(seconds: number): Buffer {
  const frames = Math.max(1, Math.round(seconds / MP3_FRAME_SECONDS));
  const frame = Buffer.alloc(MP3_FRAME_BYTES);
  frame.set([0xff, 0xfb, 0x90, 0xc0]);
  const out = Buffer.alloc(frames * MP3_FRAME_BYTES);
  for (let i = 0; i < frames; i++) frame.copy(out, i * MP3_FRAME_BYTES);
  return out;
}
