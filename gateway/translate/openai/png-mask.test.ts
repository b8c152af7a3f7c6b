// OpenAI's mask (transparent where to edit) turned into the clouds' black-and-white masks, and refused with a 400 on
// `mask` when it cannot be read as one.
import { deflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { greyPixels, rgbPng, rgbaPng } from '../../../test/helpers/png.ts';
import { GatewayError } from '../../errors/catalog.ts';
import { cloudMask, pngSize } from './png-mask.ts';

/** Transparent in the left half. */
const HALF = rgbaPng(6, 3, (x) => (x < 3 ? 0 : 255));

describe('cloudMask', () => {
  it("Imagen's mask: white where the OpenAI mask is fully transparent, black elsewhere (filters undone)", () => {
    const { png, size } = cloudMask(HALF, 255);
    expect(size).toEqual({ width: 6, height: 3 });
    const m = greyPixels(png);
    for (let y = 0; y < 3; y++) for (let x = 0; x < 6; x++) expect(m.at(x, y), `${x},${y}`).toBe(x < 3 ? 255 : 0);
  });

  it("Bedrock's mask: black where to edit; a partly transparent pixel is kept", () => {
    const m = greyPixels(
      cloudMask(
        rgbaPng(4, 2, (x, y) => (x === 1 && y === 1 ? 0 : x === 2 ? 128 : 255)),
        0,
      ).png,
    );
    expect([m.at(1, 1), m.at(2, 1), m.at(0, 0)]).toEqual([0, 255, 255]);
  });

  it('refuses what is no usable mask with a 400 on mask', () => {
    const ihdrBomb = Buffer.from(HALF);
    ihdrBomb.writeUInt32BE(100_000, 16);
    ihdrBomb.writeUInt32BE(100_000, 20);
    for (const [bytes, why] of [
      [Buffer.from('not a png at all, just text bytes'), /not a PNG/],
      [rgbPng(4, 4), /no transparency/],
      [ihdrBomb, /at most/],
      [Buffer.concat([HALF.subarray(0, 33), HALF.subarray(33, 45)]), /cut short|cannot be read|does not match/],
    ] as const) {
      const err = (() => {
        try {
          cloudMask(bytes, 255);
          return null;
        } catch (e) {
          return e;
        }
      })();
      expect(err).toBeInstanceOf(GatewayError);
      expect(err).toMatchObject({ status: 400, param: 'mask' });
      expect(String((err as Error).message)).toMatch(why);
    }
  });

  it('inflates no more than the image needs (a small file that expands to gigabytes is refused)', () => {
    const bomb = Buffer.from(HALF);
    const idatAt = bomb.indexOf('IDAT') - 4;
    const big = deflateSync(Buffer.alloc(50 * 1024 * 1024));
    const forged = Buffer.concat([bomb.subarray(0, idatAt), Buffer.from([0, 0, 0, 0]), Buffer.from('IDAT'), big, Buffer.alloc(4)]);
    forged.writeUInt32BE(big.length, idatAt);
    expect(() => cloudMask(forged, 255)).toThrow(/cannot be read|does not match/);
  });
});

describe('pngSize', () => {
  it('reads the size from the header, null for what is no PNG', () => {
    expect(pngSize(HALF)).toEqual({ width: 6, height: 3 });
    expect(pngSize(Buffer.from('GIF89a'))).toBeNull();
  });
});
