// The length of a WAV file's audio, from its own header checked against the bytes that came: a header that claims
// more audio than the file holds is billed on the bytes received; one that claims less than the bytes after it
// (audio hidden beyond the declared length, which a decoder may still read) or whose rates disagree is refused.
import { GatewayError } from '../errors/catalog.ts';
import type { HeldBytes } from '../uploads/held-bytes.ts';

/** The upload's bytes, read a piece at a time (they may be in memory or in a temporary file: uploads/held-bytes.ts). */
export type Bytes = Pick<HeldBytes, 'length' | 'slice'>;

const bad = (why: string): GatewayError => new GatewayError('invalid_request', `The WAV file's header is not consistent: ${why}.`, { param: 'file' });

/** Streaming writers leave the length unknown (0 or 0xFFFFFFFF): the audio is then the rest of the file. */
const UNKNOWN_LENGTHS = new Set([0, 0xffffffff]);
const PCM_FORMATS = new Set([1, 3, 0xfffe]);
/** Chunks a WAV file may have: real ones have a handful; each is a read of the (possibly spooled) file. */
const MAX_CHUNKS = 1024;
const tooManyChunks = (): GatewayError => bad(`it has more than ${MAX_CHUNKS} chunks`);

export async function wavSeconds(file: Bytes): Promise<number> {
  let at = 12;
  let byteRate = 0;
  for (let n = 0; at + 8 <= file.length; n++) {
    if (n >= MAX_CHUNKS) throw tooManyChunks();
    const h = await file.slice(at, at + 8);
    const id = h.toString('latin1', 0, 4);
    const size = h.readUInt32LE(4);
    if (id === 'fmt ') {
      if (size < 16) throw bad('its fmt chunk is shorter than 16 bytes');
      const f = await file.slice(at + 8, at + 24);
      if (f.length < 16) throw bad('the file ends inside its fmt chunk');
      const format = f.readUInt16LE(0);
      const channels = f.readUInt16LE(2);
      const sampleRate = f.readUInt32LE(4);
      byteRate = f.readUInt32LE(8);
      const blockAlign = f.readUInt16LE(12);
      const bits = f.readUInt16LE(14);
      if (channels === 0 || sampleRate === 0 || byteRate === 0) throw bad('it declares no channels, sample rate or byte rate');
      if (PCM_FORMATS.has(format) && (blockAlign !== channels * Math.ceil(bits / 8) || byteRate !== sampleRate * blockAlign)) {
        throw bad(`its byte rate ${byteRate} is not sample rate x channels x bytes per sample (${sampleRate} x ${channels} x ${Math.ceil(bits / 8)})`);
      }
    } else if (id === 'data') {
      if (byteRate === 0) throw bad('its data chunk comes before any fmt chunk');
      const start = at + 8;
      const received = file.length - start;
      const audio = UNKNOWN_LENGTHS.has(size) || size > received ? received : size;
      if (audio < received) await checkTrailing(file, start + size + (size & 1), size);
      return audio / byteRate;
    }
    at += 8 + size + (size & 1);
  }
  throw bad('it has no fmt and data chunks');
}

/** The bytes after the declared audio must be whole chunks (LIST, id3 and the like), not more audio. */
async function checkTrailing(file: Bytes, from: number, declared: number): Promise<void> {
  let at = from;
  for (let n = 0; at < file.length; n++) {
    if (n >= MAX_CHUNKS) throw tooManyChunks();
    const h = await file.slice(at, at + 8);
    const plausible = h.length === 8 && /^[\x20-\x7e]{4}$/.test(h.toString('latin1', 0, 4)) && at + 8 + h.readUInt32LE(4) <= file.length + 1;
    if (!plausible) throw bad(`its data chunk declares ${declared} bytes of audio, and ${file.length - from} more bytes follow that are no chunk`);
    const size = h.readUInt32LE(4);
    at += 8 + size + (size & 1);
  }
}
