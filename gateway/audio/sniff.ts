// What an upload is, from its first bytes (its magic numbers), never from its name or the client's content type:
// the formats OpenAI's audio endpoints take (flac, mp3, mp4, mpeg, mpga, m4a, ogg, wav, webm).
export type AudioFormat = 'wav' | 'flac' | 'mp3' | 'ogg' | 'mp4' | 'webm';

export const ACCEPTED_FORMATS = 'flac, mp3, mp4, mpeg, mpga, m4a, ogg, wav, webm';

/** The MIME type the file is re-sent upstream with. */
export const MIME: Record<AudioFormat, string> = {
  wav: 'audio/wav',
  flac: 'audio/flac',
  mp3: 'audio/mpeg',
  ogg: 'audio/ogg',
  mp4: 'audio/mp4',
  webm: 'audio/webm',
};

const ascii = (b: Buffer, at: number, s: string): boolean => b.length >= at + s.length && b.toString('latin1', at, at + s.length) === s;

/** An MPEG audio frame header (MPEG 1, 2 or 2.5; layers I to III; a valid bitrate and sample rate). */
function mpegFrame(b: Buffer, at: number): boolean {
  if (b.length < at + 4) return false;
  const b1 = b[at + 1] as number;
  const b2 = b[at + 2] as number;
  return b[at] === 0xff && (b1 & 0xe0) === 0xe0 && (b1 & 0x18) !== 0x08 && (b1 & 0x06) !== 0 && b2 >> 4 !== 0x0f && b2 >> 4 !== 0 && ((b2 >> 2) & 3) !== 3;
}

export function sniffAudio(head: Buffer): AudioFormat | null {
  if (ascii(head, 0, 'RIFF') && ascii(head, 8, 'WAVE')) return 'wav';
  if (ascii(head, 0, 'fLaC')) return 'flac';
  if (ascii(head, 0, 'OggS')) return 'ogg';
  if (ascii(head, 4, 'ftyp')) return 'mp4';
  if (head.length >= 4 && head.readUInt32BE(0) === 0x1a45dfa3) return 'webm';
  if (ascii(head, 0, 'ID3')) {
    // An ID3v2 tag (its size is syncsafe) before the audio: FLAC files may carry one too.
    if (head.length < 10) return null;
    const size = ((head[6] as number) << 21) | ((head[7] as number) << 14) | ((head[8] as number) << 7) | (head[9] as number);
    const after = 10 + size;
    if (ascii(head, after, 'fLaC')) return 'flac';
    return after >= head.length || mpegFrame(head, after) ? 'mp3' : null;
  }
  return mpegFrame(head, 0) ? 'mp3' : null;
}
