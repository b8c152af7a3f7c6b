// Key records by HMAC hash, looked up on demand in the store (with Redis: one round trip on a miss) and kept in a
// bounded cache, so a process's memory does not grow with the organisation's key count and a busy key costs one store
// read a second, not one per call. The cache holds the most recently used keys (SVC_KEY_CACHE_SIZE, least recently
// used dropped first), each for KEY_CACHE_TTL_MS. Revocation still takes effect on the next call: admission re-checks
// it atomically in the store, so a key revoked meanwhile gets 401 key_revoked (or key_expired: an expiry is judged
// again there, on the store's clock) from admit while its record is still cached here, and admit's refusal drops it.
// A change of a key's limits or whitelist applies within KEY_CACHE_TTL_MS.
//
// Unknown keys are remembered apart, in a small cache of their own with the same short life: a flood of unknown keys
// can neither push known keys out nor send Redis one lookup per call for the same key; concurrent lookups of one
// hash share one store read. Every lookup is counted by result for /metrics (svc_gateway_key_lookups_total).
import type { FoundKey, Store } from '../state/store.ts';

export const KEY_CACHE_TTL_MS = 1000;
/** Keys each process keeps at most (SVC_KEY_CACHE_SIZE). */
export const DEFAULT_KEY_CACHE_SIZE = 10_000;
/** Unknown keys remembered at most (their own cache: they never evict known keys). */
export const UNKNOWN_KEYS_REMEMBERED = 1000;

/** What one lookup did: hit (cached), miss (read from the store, found), unknown (read, not found), unknown_cached. */
export type KeyLookupResult = 'hit' | 'miss' | 'unknown' | 'unknown_cached';

export interface KeyCacheOptions {
  /** Known keys kept at most (default DEFAULT_KEY_CACHE_SIZE; 0: no cache, every lookup reads the store). */
  maxEntries?: number;
  ttlMs?: number;
  /** Unknown keys remembered at most (default UNKNOWN_KEYS_REMEMBERED). */
  maxUnknown?: number;
}

interface Entry {
  record: FoundKey;
  until: number;
}

export class KeyCache {
  /** In order of last use, least recent first (a Map keeps insertion order; a hit moves its entry to the end). */
  private readonly entries = new Map<string, Entry>();
  /** Unknown hashes and until when they are believed unknown; oldest first. */
  private readonly unknown = new Map<string, number>();
  private readonly reading = new Map<string, Promise<FoundKey | null>>();
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly maxUnknown: number;
  readonly counts: Record<KeyLookupResult, number> = { hit: 0, miss: 0, unknown: 0, unknown_cached: 0 };

  constructor(opts: KeyCacheOptions | number = {}) {
    const o = typeof opts === 'number' ? { ttlMs: opts } : opts;
    this.ttlMs = o.ttlMs ?? KEY_CACHE_TTL_MS;
    this.maxEntries = o.maxEntries ?? DEFAULT_KEY_CACHE_SIZE;
    this.maxUnknown = o.maxUnknown ?? UNKNOWN_KEYS_REMEMBERED;
  }

  /** Known keys held now. */
  get size(): number {
    return this.entries.size;
  }

  /** The store's record for a hash, from the cache while fresh. */
  async find(store: Store, hash: string, now: number): Promise<FoundKey | null> {
    const hit = this.entries.get(hash);
    if (hit) {
      if (hit.until > now) {
        this.counts.hit++;
        // Most recently used last: the least recently used is the first to go.
        this.entries.delete(hash);
        this.entries.set(hash, hit);
        return hit.record;
      }
      this.entries.delete(hash);
    }
    const gone = this.unknown.get(hash);
    if (gone !== undefined) {
      if (gone > now) {
        this.counts.unknown_cached++;
        return null;
      }
      this.unknown.delete(hash);
    }
    const running = this.reading.get(hash);
    if (running) return running;
    const p = this.read(store, hash, now);
    this.reading.set(hash, p);
    try {
      return await p;
    } finally {
      this.reading.delete(hash);
    }
  }

  private async read(store: Store, hash: string, now: number): Promise<FoundKey | null> {
    const record = await store.findKey(hash);
    if (!record) {
      this.counts.unknown++;
      if (this.maxUnknown > 0) {
        if (this.unknown.size >= this.maxUnknown) this.unknown.delete(this.unknown.keys().next().value as string);
        this.unknown.set(hash, now + this.ttlMs);
      }
      return null;
    }
    this.counts.miss++;
    // Expired keys are not cached: refused anyway, and an expiry moved later works at once.
    if (record.expired || this.maxEntries === 0) return record;
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(hash, { record, until: now + this.ttlMs });
    return record;
  }

  /** Drops what is known of a hash (a revocation or expiry admission saw, or a key just published here). */
  forget(hash: string): void {
    this.entries.delete(hash);
    this.unknown.delete(hash);
  }
}

const caches = new WeakMap<Store, KeyCache>();

/**
 * One cache per store, so tests and processes with their own store never share records; `opts` size it when it is
 * made (the server does so first, from SVC_KEY_CACHE_SIZE).
 */
export function keyCacheOf(store: Store, opts?: KeyCacheOptions): KeyCache {
  let c = caches.get(store);
  if (!c) caches.set(store, (c = new KeyCache(opts)));
  return c;
}
