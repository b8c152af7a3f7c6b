import { describe, expect, it } from 'vitest';
import { checksum, crc32, displayKey, generateKey, hashKey, isWellFormedKey, KEY_LENGTH } from './keys.ts';

describe('key format', () => {
  it('computes the IEEE CRC32 of known vectors', () => {
    expect(crc32('123456789')).toBe(0xcbf43926);
    expect(crc32('')).toBe(0);
  });

  it('writes the checksum in 6 base62 digits, most significant first, zero padded', () => {
    // 0xcbf43926 = 3421780262 = base62 "3k4Ub0"... computed independently below
    let n = 0xcbf43926;
    const digits: string[] = [];
    const A = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
    while (n > 0) {
      digits.unshift(A[n % 62] as string);
      n = Math.floor(n / 62);
    }
    expect(checksum('123456789')).toBe(digits.join('').padStart(6, '0'));
    expect(checksum('')).toBe('000000');
  });

  it('generates well-formed, distinct keys', () => {
    const a = generateKey();
    const b = generateKey();
    expect(a).toMatch(/^sk-svc-[0-9A-Za-z]{38}$/);
    expect(a).toHaveLength(KEY_LENGTH);
    expect(a).not.toBe(b);
    expect(isWellFormedKey(a)).toBe(true);
  });

  it.each([
    ['wrong prefix', (k: string) => 'sk-abc-' + k.slice(7)],
    ['one body character changed', (k: string) => k.slice(0, 10) + (k[10] === 'a' ? 'b' : 'a') + k.slice(11)],
    ['checksum changed', (k: string) => k.slice(0, -1) + (k.endsWith('0') ? '1' : '0')],
    ['too short', (k: string) => k.slice(0, -2)],
    ['too long', (k: string) => k + 'A'],
    ['bad character', (k: string) => k.slice(0, 12) + '-' + k.slice(13)],
  ])('refuses a key with %s', (_name, mutate) => {
    expect(isWellFormedKey(mutate(generateKey()))).toBe(false);
  });

  it('displays only the prefix and the last 4 characters', () => {
    const k = generateKey();
    expect(displayKey(k)).toBe('sk-svc-…' + k.slice(-4));
  });

  it('hashes with the pepper: different peppers give different hashes, never the key', () => {
    const k = generateKey();
    expect(hashKey(k, 'p1')).not.toBe(hashKey(k, 'p2'));
    expect(hashKey(k, 'p1')).toMatch(/^[0-9a-f]{64}$/);
  });
});
