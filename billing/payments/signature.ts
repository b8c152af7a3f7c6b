// Stripe webhook signatures, checked by Stripe's own library (`Stripe.webhooks.constructEvent`: header
// `Stripe-Signature: t=<unix>,v1=<hex>[,v1=…]`, HMAC-SHA256 over `<t>.<raw body>` compared in constant time with every
// v1, a timestamp older than `toleranceSec` refused). Stripe's check lets a timestamp from the future through; this
// one also refuses a timestamp more than `toleranceSec` ahead of now, as before.
import Stripe from 'stripe';

export const SIGNATURE_TOLERANCE_SEC = 300;

/** `notJson`: the signature matched but the body is not JSON. */
export type SignatureVerdict = { ok: true; event: Stripe.Event } | { ok: false; reason: string; notJson?: true };

/** The header Stripe would send for this payload (tests, and the README's curl example does the same with openssl). */
export function signatureHeader(payload: string, secret: string, timestampSec = Math.floor(Date.now() / 1000)): string {
  return Stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp: timestampSec });
}

/** Verifies the raw body against its header and returns the parsed event. */
export function verifySignature(
  payload: Buffer | string,
  header: string | undefined,
  secret: string,
  nowSec: number,
  toleranceSec = SIGNATURE_TOLERANCE_SEC,
): SignatureVerdict {
  if (!header || header.length > 4096) return { ok: false, reason: 'missing Stripe-Signature header' };
  const t = /(?:^|,)\s*t=(\d{1,12})\s*(?:,|$)/.exec(header)?.[1];
  if (t !== undefined && Number(t) - nowSec > toleranceSec) return { ok: false, reason: 'signature timestamp outside the tolerance' };
  try {
    return { ok: true, event: Stripe.webhooks.constructEvent(payload, header, secret, toleranceSec, undefined, nowSec * 1000) };
  } catch (err) {
    // Stripe's messages name the failure (no signatures found, timestamp outside the tolerance zone, no match) and
    // never the secret; a body that is not JSON fails here too, after its signature matched.
    if (err instanceof Stripe.errors.StripeSignatureVerificationError) return { ok: false, reason: err.message.split('\n')[0] ?? 'no signature matches' };
    return { ok: false, reason: 'body is not JSON', notJson: true };
  }
}
