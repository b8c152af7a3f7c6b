// Key format (docs/api.md: Keys): sk-svc- + 32 base62 characters + 6-character base62 CRC32 of the body.
import { createHmac, randomInt, timingSafeEqual } from 'node:crypto';

export const KEY_PREFIX = 'sk-svc-';
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const BODY_LEN = 32;
const SUM_LEN = 6;
export const KEY_LENGTH = KEY_PREFIX.length + BODY_LEN + SUM_LEN;
const WELL_FORMED = /^sk-svc-[0-9A-Za-z]{38}$/;

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

export function crc32(s: string): number {
  let c = 0xffffffff;
  for (let i = 0; i < s.length; i++) c = (CRC_TABLE[(c ^ s.charCodeAt(i)) & 0xff] as number) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function base62(n: number, width: number): string {
  let out = '';
  let v = n;
  while (v > 0) {
    out = ALPHABET[v % 62] + out;
    v = Math.floor(v / 62);
  }
  return out.padStart(width, '0');
}

export function checksum(body: string): string {
  return base62(crc32(body), SUM_LEN);
}

export function generateKey(): string {
  let body = '';
  for (let i = 0; i < BODY_LEN; i++) body += ALPHABET[randomInt(62)];
  return KEY_PREFIX + body + checksum(body);
}

/** True when the key has the right shape and checksum; needs no store. */
export function isWellFormedKey(key: string): boolean {
  if (key.length !== KEY_LENGTH || !WELL_FORMED.test(key)) return false;
  const body = key.slice(KEY_PREFIX.length, KEY_PREFIX.length + BODY_LEN);
  return checksum(body) === key.slice(KEY_PREFIX.length + BODY_LEN);
}

/** The form shown after creation: prefix and last 4 characters. */
export function displayKey(key: string): string {
  return `${KEY_PREFIX}…${key.slice(-4)}`;
}

/** The only stored form of a key: HMAC-SHA-256 under the server's pepper, hex. */
export function hashKey(key: string, pepper: string): string {
  return createHmac('sha256', pepper).update(key).digest('hex');
}

export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}
