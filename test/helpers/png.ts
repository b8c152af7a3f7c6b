// PNG images made and read in code for the image edit tests: an RGBA image whose alpha a function gives (OpenAI's
// masks are transparent where to edit), an opaque RGB one, and the pixels of an 8-bit greyscale PNG read back (the
// masks the gateway sends the clouds; unfiltered scanlines, as it writes them).
import { crc32, deflateSync, inflateSync } from 'node:zlib';

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function chunk(type: string, data: Buffer): Buffer {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  data.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}

function png(width: number, height: number, color: 2 | 6, pixel: (x: number, y: number) => number[]): Buffer {
  const channels = color === 6 ? 4 : 3;
  const rows = Buffer.alloc((width * channels + 1) * height);
  for (let y = 0; y < height; y++) {
    // Filter type 1 (Sub) on odd rows, so a reader must undo filters, not just skip a byte.
    const filter = y % 2;
    const at = y * (width * channels + 1);
    rows[at] = filter;
    for (let x = 0; x < width; x++) {
      const px = pixel(x, y);
      for (let c = 0; c < channels; c++) {
        const left = x > 0 ? (pixel(x - 1, y)[c] as number) : 0;
        rows[at + 1 + x * channels + c] = ((px[c] as number) - (filter === 1 ? left : 0)) & 0xff;
      }
    }
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8;
  ihdr[9] = color;
  return Buffer.concat([SIGNATURE, chunk('IHDR', ihdr), chunk('IDAT', deflateSync(rows)), chunk('IEND', Buffer.alloc(0))]);
}

/** An RGBA PNG, grey where opaque, with the alpha `alpha(x, y)` gives. */
export function rgbaPng(width: number, height: number, alpha: (x: number, y: number) => number): Buffer {
  return png(width, height, 6, (x, y) => [120, 130, 140, alpha(x, y)]);
}

/** An opaque RGB PNG (no transparency at all). */
export function rgbPng(width: number, height: number): Buffer {
  return png(width, height, 2, () => [10, 200, 30]);
}

/** An opaque RGB PNG of random pixels (it does not compress: a large file from a small image). */
export function noisyRgbPng(width: number, height: number, noise: Buffer): Buffer {
  return png(width, height, 2, (x, y) => {
    const i = (y * width + x) * 3;
    return [noise[i % noise.length] as number, noise[(i + 1) % noise.length] as number, noise[(i + 2) % noise.length] as number];
  });
}

/** The pixels of an 8-bit greyscale PNG whose scanlines are unfiltered (filter type 0). */
export function greyPixels(b: Buffer): { width: number; height: number; at: (x: number, y: number) => number } {
  if (!b.subarray(0, 8).equals(SIGNATURE) || b.toString('latin1', 12, 16) !== 'IHDR') throw new Error('not a PNG');
  const width = b.readUInt32BE(16);
  const height = b.readUInt32BE(20);
  if (b[24] !== 8 || b[25] !== 0) throw new Error(`not 8-bit greyscale (depth ${b[24]}, colour type ${b[25]})`);
  const idat: Buffer[] = [];
  for (let at = 8; at < b.length;) {
    const len = b.readUInt32BE(at);
    if (b.toString('latin1', at + 4, at + 8) === 'IDAT') idat.push(b.subarray(at + 8, at + 8 + len));
    at += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(idat));
  for (let y = 0; y < height; y++) if (raw[y * (width + 1)] !== 0) throw new Error(`row ${y} is filtered`);
  return { width, height, at: (x, y) => raw[y * (width + 1) + 1 + x] as number };
}
