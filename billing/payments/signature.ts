// Stripe webhook signatures, verified here without Stripe's SDK: header `Stripe-Signature: t=<unix>,v1=<hex>[,v1=…]`,
// expected v1 = hex(HMAC-SHA256(secret, `${t}.${rawBody}`)), compared in constant time with every v1 given; a
// timestamp more than `toleranceSec` (300 s, as Stripe's libraries) from now is refused, in either direction.
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_TOLERANCE_SEC = 300;

export type SignatureVerdict = { ok: true } | { ok: false; reason: string };

export function signPayload(payload: string, secret: string, timestampSec: number): string {
  return createHmac('sha256', secret).update(`${timestampSec}.${payload}`, 'utf8').digest('hex');
}

/** The header Stripe would send for this payload (tests, and the README's curl example). */
export function signatureHeader(payload: string, secret: string, timestampSec = Math.floor(Date.now() / 1000)): string {
  return `t=${timestampSec},v1=${signPayload(payload, secret, timestampSec)}`;
}

export function verifySignature(
  payload: Buffer | string,
  header: string | undefined,
  secret: string,
  nowSec: number,
  toleranceSec = SIGNATURE_TOLERANCE_SEC,
): SignatureVerdict {
  if (!header || header.length > 4096) return { ok: false, reason: 'missing Stripe-Signature header' };
  let t: number | null = null;
  const v1: Buffer[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const k = part.slice(0, eq).trim();
    const v = part.slice(eq + 1).trim();
    if (k === 't' && /^\d{1,12}$/.test(v)) t = Number(v);
    else if (k === 'v1' && /^[0-9a-f]{64}$/.test(v)) v1.push(Buffer.from(v, 'hex'));
  }
  if (t === null) return { ok: false, reason: 'no timestamp in Stripe-Signature' };
  if (v1.length === 0) return { ok: false, reason: 'no v1 signature in Stripe-Signature' };
  if (Math.abs(nowSec - t) > toleranceSec) return { ok: false, reason: 'signature timestamp outside the tolerance' };
  const body = Buffer.isBuffer(payload) ? payload : Buffer.from(payload, 'utf8');
  const expected = createHmac('sha256', secret).update(`${t}.`, 'utf8').update(body).digest();
  // Every candidate is compared (no early exit), each in constant time.
  let match = false;
  for (const sig of v1) if (timingSafeEqual(sig, expected)) match = true;
  return match ? { ok: true } : { ok: false, reason: 'no signature matches' };
}
