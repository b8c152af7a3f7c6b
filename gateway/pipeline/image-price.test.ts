import { describe, expect, it } from 'vitest';
import type { CompiledModel } from '../contract/snapshot.ts';
import { GatewayError } from '../errors/catalog.ts';
import { NO_USAGE } from '../translate/types.ts';
import { costBound, reserve } from './estimate.ts';
import { imageChain, imageCostNano, imageUnitNano } from './image-price.ts';

const model = (over: Partial<CompiledModel>): CompiledModel => ({
  id: 'img',
  type: 'image',
  minTier: 0,
  inputNanoPerToken: 0,
  outputNanoPerToken: 0,
  maxOutputTokens: 4096,
  targets: [],
  fallbacks: [],
  ...over,
});

const dalle = model({
  id: 'dall-e-3',
  imagePrices: [
    { size: '1024x1024', quality: 'standard', nano: 40 },
    { size: '1024x1024', quality: 'hd', nano: 80 },
    { size: '1792x1024', quality: null, nano: 120 },
  ],
});
const tokens = model({
  id: 'gpt-image-1',
  inputNanoPerToken: 5,
  imageInputNanoPerToken: 10,
  outputNanoPerToken: 40,
  maxOutputTokens: 6240,
  imageSizes: ['1024x1024'],
});

describe('image prices', () => {
  it('picks the named quality, else the size’s entry without one; an open size or quality takes the dearest', () => {
    expect(imageUnitNano(dalle, '1024x1024', 'standard')).toBe(40);
    expect(imageUnitNano(dalle, '1024x1024', null)).toBe(80);
    expect(imageUnitNano(dalle, '1792x1024', 'hd')).toBe(120);
    expect(imageUnitNano(dalle, 'auto', 'auto')).toBe(120);
  });

  it('holds n x the dearest applicable price per image, or the input bound plus maxOutputTokens per image', () => {
    const d = { inputBytes: 100, extraInputTokens: 0, maxTokens: undefined, choices: 1 };
    expect(costBound(dalle, { ...d, image: { n: 3, size: '1024x1024', quality: null } })).toBe(3 * 80);
    expect(costBound(tokens, { ...d, image: { n: 2, size: null, quality: null } })).toBe(100 * 10 + 2 * 6240 * 40);
    expect(reserve([dalle], { ...d, image: { n: 3, size: '1024x1024', quality: 'standard' } }).holdNano).toBe(120);
  });

  it('charges what came back: images at the asked price, the answer’s size and quality where the call left them open', () => {
    const d = { n: 2, size: null, quality: null };
    const got = { ...NO_USAGE, outputTokens: 2 };
    expect(imageCostNano(dalle, got, { ...got, imageSize: '1024x1024', imageQuality: 'standard' }, d)).toBe(80);
    // Asked for hd: an answer saying standard does not lower the price of what was asked.
    expect(imageCostNano(dalle, got, { ...got, imageQuality: 'standard' }, { n: 2, size: '1024x1024', quality: 'hd' })).toBe(160);
    const used = { ...NO_USAGE, inputTokens: 300, outputTokens: 4160 };
    expect(imageCostNano(tokens, used, { ...used, imageInputTokens: 200 }, d)).toBe(100 * 5 + 200 * 10 + 4160 * 40);
  });

  it('refuses a size or quality the requested model does not serve (400 naming it) and drops fallbacks that do not', () => {
    const refused = (fn: () => unknown): GatewayError => {
      try {
        fn();
      } catch (e) {
        return e as GatewayError;
      }
      throw new Error('not refused');
    };
    expect(refused(() => imageChain([dalle], { n: 1, size: '512x512', quality: null }))).toMatchObject({ code: 'invalid_request', param: 'size' });
    expect(refused(() => imageChain([dalle], { n: 1, size: '1024x1024', quality: 'low' }))).toMatchObject({ param: 'quality' });
    expect(refused(() => imageChain([tokens], { n: 1, size: '1536x1024', quality: null }))).toMatchObject({ param: 'size' });
    expect(imageChain([tokens, dalle], { n: 1, size: '1024x1024', quality: 'high' }).map((m) => m.id)).toEqual(['gpt-image-1']);
  });
});
