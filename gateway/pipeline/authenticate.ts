// Step 1: the key. Malformed keys are refused before any store lookup; stored keys are found by HMAC.
import { hashKey, isWellFormedKey, KEY_PREFIX } from '../contract/keys.ts';
import { GatewayError, type Dialect } from '../errors/catalog.ts';
import { KEY_EXPIRED_MESSAGE } from '../state/admission.ts';
import type { FoundKey, Store } from '../state/store.ts';
import type { KeyCache } from './key-cache.ts';

type Headers = Record<string, string | string[] | undefined>;

/**
 * The key of an Authorization header: the Bearer scheme only (as OpenAI's and Anthropic's APIs). A bare key is
 * refused with a message that says how to send it, so a misconfigured client learns why.
 */
function bearer(h: string | string[] | undefined): string | undefined {
  const v = (Array.isArray(h) ? h[0] : h)?.trim();
  if (!v) return undefined;
  const m = /^Bearer\s+(.+)$/i.exec(v);
  if (!m) throw new GatewayError('invalid_api_key', 'The Authorization header must use the Bearer scheme: Authorization: Bearer <key>.');
  return m[1]?.trim();
}

/** The key a request carries: Authorization: Bearer everywhere, x-api-key too on the Anthropic endpoint. */
export function presentedKey(headers: Headers, dialect: Dialect): string | undefined {
  if (dialect === 'anthropic') {
    const x = headers['x-api-key'];
    const v = Array.isArray(x) ? x[0] : x;
    if (v) return v.trim();
  }
  return bearer(headers.authorization);
}

/** The presented key if it is there and well formed (no store needed): checked before the request body is read. */
export function wellFormedKey(headers: Headers, dialect: Dialect): string {
  const key = presentedKey(headers, dialect);
  if (!key) {
    const how = dialect === 'anthropic' ? 'an x-api-key header or Authorization: Bearer' : 'Authorization: Bearer <key>';
    throw new GatewayError('missing_api_key', `No API key was given: send it as ${how}.`);
  }
  if (!isWellFormedKey(key)) {
    throw new GatewayError('invalid_api_key', `Malformed API key: keys start with ${KEY_PREFIX} and carry a checksum.`);
  }
  return key;
}

/** With a cache (the model endpoints, whose admission re-checks revocation), a busy key skips the store read. */
export async function authenticate(headers: Headers, dialect: Dialect, store: Store, pepper: string, cache?: KeyCache): Promise<FoundKey> {
  const key = wellFormedKey(headers, dialect);
  const hash = hashKey(key, pepper);
  const record = cache ? await cache.find(store, hash, Date.now()) : await store.findKey(hash);
  if (!record) throw new GatewayError('invalid_api_key', 'Unknown API key.');
  if (record.revoked) throw new GatewayError('key_revoked', 'This API key has been revoked.');
  // Judged by the store's clock at lookup; admission judges again at the second (a cached record may be 1 s old).
  if (record.expired) throw new GatewayError('key_expired', KEY_EXPIRED_MESSAGE);
  return record;
}
