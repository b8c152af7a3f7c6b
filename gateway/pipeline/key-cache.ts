// Key records by HMAC hash, kept for a moment so a busy key costs one store read per second, not one per call
// (with Redis: one round trip to admit and one to settle, none to look the key up). Revocation still takes effect
// on the next call: admission re-checks it atomically in the store, so a key revoked meanwhile gets 401
// key_revoked (or key_expired: an expiry is judged again there, on the store's clock) from admit while its record is
// still cached here. A change of a key's limits or whitelist applies
// within KEY_CACHE_TTL_MS.
import type { FoundKey, Store } from '../state/store.ts';

export const KEY_CACHE_TTL_MS = 1000;
const MAX_ENTRIES = 10_000;

interface Entry {
  record: FoundKey;
  until: number;
}

export class KeyCache {
  private readonly entries = new Map<string, Entry>();
  private readonly ttlMs: number;

  constructor(ttlMs = KEY_CACHE_TTL_MS) {
    this.ttlMs = ttlMs;
  }

  /** The store's record for a hash; unknown keys are never cached (a key published a moment later works at once). */
  async find(store: Store, hash: string, now: number): Promise<FoundKey | null> {
    const hit = this.entries.get(hash);
    if (hit && hit.until > now) return hit.record;
    const record = await store.findKey(hash);
    // Expired keys are not cached either: refused anyway, and an expiry moved later works at once.
    if (!record || record.expired) {
      this.entries.delete(hash);
      return record;
    }
    if (this.entries.size >= MAX_ENTRIES && !hit) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(hash, { record, until: now + this.ttlMs });
    return record;
  }

  forget(hash: string): void {
    this.entries.delete(hash);
  }
}

const caches = new WeakMap<Store, KeyCache>();

/** One cache per store, so tests and processes with their own store never share records. */
export function keyCacheOf(store: Store): KeyCache {
  let c = caches.get(store);
  if (!c) caches.set(store, (c = new KeyCache()));
  return c;
}
