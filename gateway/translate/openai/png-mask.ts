// OpenAI's edit mask in the form the clouds take. OpenAI edits where the mask is fully transparent (alpha 0); Imagen
// edits where its mask is non-zero (white) and Bedrock's Amazon models where it is black. So the mask's alpha is read
// (any PNG with transparency: RGBA or grey + alpha at 8 or 16 bits, or a palette or colour key with tRNS) and a
// black-and-white 8-bit greyscale PNG of the same size is written, the edit area in the colour the cloud wants. Its
// pixels are bounded before anything is inflated, so a small file cannot expand into gigabytes.
import { crc32, deflateSync, inflateSync } from 'node:zlib';
import { GatewayError } from '../../errors/catalog.ts';

/** Width x height a mask may have: the clouds' image models take at most 4096 px a side (Nova Canvas). */
export const MASK_MAX_PIXELS = 4096 * 4096;
const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

const bad = (why: string): GatewayError => new GatewayError('invalid_request', `The mask cannot be used: ${why}.`, { param: 'mask' });

export interface PngSize {
  width: number;
  height: number;
}

/** A PNG's size from its header (IHDR), or null when the bytes are no PNG. */
export function pngSize(b: Buffer): PngSize | null {
  if (b.length < 24 || !b.subarray(0, 8).equals(SIGNATURE) || b.toString('latin1', 12, 16) !== 'IHDR') return null;
  return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
}

interface Header extends PngSize {
  depth: number;
  color: number;
}

const CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };

function chunks(b: Buffer): { header: Header; idat: Buffer; trns: Buffer | null } {
  const size = pngSize(b);
  if (!size) throw bad('it is not a PNG image');
  const header: Header = { ...size, depth: b[24] as number, color: b[25] as number };
  if (b[28] !== 0) throw bad('it is an interlaced PNG; save it without interlacing');
  if (CHANNELS[header.color] === undefined || ![1, 2, 4, 8, 16].includes(header.depth)) throw bad('its PNG colour type or bit depth is not valid');
  if (size.width === 0 || size.height === 0 || size.width * size.height > MASK_MAX_PIXELS) throw bad(`it must be at most ${MASK_MAX_PIXELS} pixels`);
  const idat: Buffer[] = [];
  let trns: Buffer | null = null;
  for (let at = 8; at + 8 <= b.length;) {
    const len = b.readUInt32BE(at);
    const type = b.toString('latin1', at + 4, at + 8);
    const data = b.subarray(at + 8, at + 8 + len);
    if (data.length < len) throw bad('the PNG file is cut short');
    if (type === 'IDAT') idat.push(data);
    else if (type === 'tRNS') trns = data;
    else if (type === 'IEND') break;
    at += 12 + len;
  }
  return { header, idat: Buffer.concat(idat), trns };
}

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/** The scanlines without their filters (PNG's five filter types), `stride` bytes each. */
function unfilter(raw: Buffer, h: Header, stride: number, bpp: number): Buffer {
  const out = Buffer.alloc(stride * h.height);
  for (let y = 0; y < h.height; y++) {
    const filter = raw[y * (stride + 1)] as number;
    const src = y * (stride + 1) + 1;
    const row = y * stride;
    for (let x = 0; x < stride; x++) {
      const a = x >= bpp ? (out[row + x - bpp] as number) : 0;
      const b = y > 0 ? (out[row - stride + x] as number) : 0;
      const c = x >= bpp && y > 0 ? (out[row - stride + x - bpp] as number) : 0;
      const v = raw[src + x] as number;
      const p = filter === 0 ? 0 : filter === 1 ? a : filter === 2 ? b : filter === 3 ? (a + b) >> 1 : filter === 4 ? paeth(a, b, c) : -1;
      if (p < 0) throw bad('its PNG data uses an unknown filter');
      out[row + x] = (v + p) & 0xff;
    }
  }
  return out;
}

/** For each pixel, whether it is fully transparent. */
function transparent(png: Buffer): { size: PngSize; clear: Uint8Array } {
  const { header: h, idat, trns } = chunks(png);
  const channels = CHANNELS[h.color] as number;
  const bitsPerPixel = channels * h.depth;
  const stride = Math.ceil((h.width * bitsPerPixel) / 8);
  let raw: Buffer;
  try {
    raw = inflateSync(idat, { maxOutputLength: (stride + 1) * h.height });
  } catch {
    throw bad('its PNG data cannot be read');
  }
  if (raw.length !== (stride + 1) * h.height) throw bad('its PNG data does not match its size');
  const px = unfilter(raw, h, stride, Math.max(1, bitsPerPixel >> 3));
  const clear = new Uint8Array(h.width * h.height);
  const sample = (y: number, i: number): number => {
    if (h.depth === 16) return px.readUInt16BE(y * stride + i * 2);
    if (h.depth === 8) return px[y * stride + i] as number;
    const bit = i * h.depth;
    return ((px[y * stride + (bit >> 3)] as number) >> (8 - h.depth - (bit & 7))) & ((1 << h.depth) - 1);
  };
  const hasAlpha = h.color === 4 || h.color === 6;
  if (!hasAlpha && !trns) throw bad('it has no transparency; OpenAI edits where the mask is fully transparent (alpha 0)');
  for (let y = 0; y < h.height; y++) {
    for (let x = 0; x < h.width; x++) {
      const i = x * channels;
      let isClear: boolean;
      if (hasAlpha) isClear = sample(y, i + channels - 1) === 0;
      else if (h.color === 3) isClear = (trns as Buffer)[sample(y, i)] === 0;
      else if (h.color === 0) isClear = (trns as Buffer).length >= 2 && sample(y, i) === (trns as Buffer).readUInt16BE(0);
      else isClear = (trns as Buffer).length >= 6 && [0, 1, 2].every((c) => sample(y, i + c) === (trns as Buffer).readUInt16BE(c * 2));
      clear[y * h.width + x] = isClear ? 1 : 0;
    }
  }
  return { size: { width: h.width, height: h.height }, clear };
}

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/** A greyscale PNG of the mask: `edit` where OpenAI's mask is fully transparent, the other value elsewhere. */
export function cloudMask(openAIMask: Buffer, edit: 0 | 255): { png: Buffer; size: PngSize } {
  const { size, clear } = transparent(openAIMask);
  const rows = Buffer.alloc((size.width + 1) * size.height);
  for (let y = 0; y < size.height; y++) {
    for (let x = 0; x < size.width; x++) rows[y * (size.width + 1) + 1 + x] = clear[y * size.width + x] ? edit : 255 - edit;
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size.width, 0);
  ihdr.writeUInt32BE(size.height, 4);
  ihdr[8] = 8;
  ihdr[9] = 0;
  const png = Buffer.concat([SIGNATURE, chunk('IHDR', ihdr), chunk('IDAT', deflateSync(rows)), chunk('IEND', Buffer.alloc(0))]);
  return { png, size };
}
