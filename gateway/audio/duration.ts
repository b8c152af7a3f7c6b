// The seconds of audio an upload holds, read from the file itself (the hold of a transcription is priced on it): WAV
// by its own header checked against its bytes (wav.ts), the compressed formats by music-metadata (their headers, or
// their frames where the header says nothing); an MP3's header is capped at what its bytes can hold (mp3.ts).
import { Readable } from 'node:stream';
import { parseStream } from 'music-metadata';
import { GatewayError } from '../errors/catalog.ts';
import { mp3SecondsCeiling } from './mp3.ts';
import { ACCEPTED_FORMATS, MIME, sniffAudio, type AudioFormat } from './sniff.ts';
import type { UploadedFile } from './upload.ts';
import { wavSeconds } from './wav.ts';

export interface AudioFacts {
  format: AudioFormat;
  /** Length of the audio in seconds (fractional). */
  seconds: number;
  /** Whole seconds billed: the length rounded up (a file of audio is at least one second). */
  billedSeconds: number;
}

export async function audioFacts(file: UploadedFile): Promise<AudioFacts> {
  const format = sniffAudio(await file.data.slice(0, 4096));
  if (!format) throw new GatewayError('invalid_request', `The file is not audio in a format this endpoint takes (${ACCEPTED_FORMATS}).`, { param: 'file' });
  let seconds = format === 'wav' ? await wavSeconds(file.data) : await parsedSeconds(file, format);
  if (format === 'mp3') seconds = Math.min(seconds, await mp3SecondsCeiling(file.data));
  if (!Number.isFinite(seconds) || seconds <= 0) throw new GatewayError('invalid_request', 'The audio file holds no audio.', { param: 'file' });
  return { format, seconds, billedSeconds: Math.max(1, Math.ceil(seconds)) };
}

async function parsedSeconds(file: UploadedFile, format: AudioFormat): Promise<number> {
  // The parser may stop before the end: the stream is ended here so a spooled file's handle is closed at once.
  const bytes = Readable.from(file.data.stream(), { objectMode: false });
  try {
    const meta = await parseStream(bytes, { mimeType: MIME[format], size: file.bytes }, { duration: true, skipCovers: true });
    if (meta.format.duration !== undefined) return meta.format.duration;
  } catch {
    // Unreadable: refused below like a file without a length.
  } finally {
    bytes.destroy();
  }
  throw new GatewayError('invalid_request', `The ${format} file's length cannot be read from it, so the call cannot be priced.`, { param: 'file' });
}
