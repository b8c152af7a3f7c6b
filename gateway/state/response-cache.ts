// Where the response cache keeps its entries (pipeline/cache.ts decides what is cached and how it is billed): one
// account's entries under its own hash-tagged keys (contract/redis-keys.ts), so no entry is ever read across
// accounts and the scripts run on Redis Cluster. Entries are opaque strings here.
import { redisKeys, type RedisKeys } from '../contract/redis-keys.ts';
import { int } from './lua-script.ts';
import type { RedisClient } from './redis-connect.ts';
import { SCRIPTS } from './scripts.ts';

export interface CachePut {
  account: string;
  /** The request's key: sha256 hex of its canonical form. */
  sha: string;
  entry: string;
  ttlMs: number;
  now: number;
  /** The account's byte budget: older entries are evicted to make room, an entry above it is not stored. */
  budgetBytes: number;
}

export interface CacheStore {
  get(account: string, sha: string, now: number): Promise<string | null>;
  /** `stored` false: the entry alone is above the budget. `evicted`: entries removed to make room. */
  put(p: CachePut): Promise<{ stored: boolean; evicted: number }>;
}

/** The default per-account budget of cached bytes (SVC_CACHE_ACCOUNT_MAX_BYTES): 64 MiB. */
export const DEFAULT_CACHE_ACCOUNT_BYTES = 64 * 1024 * 1024;

export class RedisCacheStore implements CacheStore {
  private readonly redis: RedisClient;
  private readonly k: RedisKeys;

  constructor(redis: RedisClient, prefix: string) {
    this.redis = redis;
    this.k = redisKeys(prefix);
  }

  async get(account: string, sha: string, now: number): Promise<string | null> {
    const a = this.k.account(account);
    const r = await SCRIPTS.cacheGet.run(this.redis, { entries: a.cache, index: a.cachex }, { sha, now });
    return typeof r === 'string' ? r : null;
  }

  async put(p: CachePut): Promise<{ stored: boolean; evicted: number }> {
    const a = this.k.account(p.account);
    const r = await SCRIPTS.cachePut.run(
      this.redis,
      { entries: a.cache, index: a.cachex, sizes: a.cachesz },
      { sha: p.sha, entryJson: p.entry, ttlMs: p.ttlMs, now: p.now, budgetBytes: p.budgetBytes },
    );
    const [stored, evicted] = Array.isArray(r) ? r.map(int) : [0, 0];
    return { stored: stored === 1, evicted: evicted ?? 0 };
  }
}

interface MemoryEntry {
  entry: string;
  bytes: number;
  expires: number;
}

/** The same rules in process (standalone without Redis): per-account maps, soonest-expiring evicted first. */
export class MemoryCacheStore implements CacheStore {
  private readonly accounts = new Map<string, Map<string, MemoryEntry>>();

  async get(account: string, sha: string, now: number): Promise<string | null> {
    const e = this.accounts.get(account)?.get(sha);
    return e && e.expires > now ? e.entry : null;
  }

  async put(p: CachePut): Promise<{ stored: boolean; evicted: number }> {
    const bytes = Buffer.byteLength(p.entry);
    if (bytes > p.budgetBytes) return { stored: false, evicted: 0 };
    let m = this.accounts.get(p.account);
    if (!m) this.accounts.set(p.account, (m = new Map()));
    for (const [sha, e] of m) if (e.expires <= p.now) m.delete(sha);
    m.delete(p.sha);
    let sum = 0;
    for (const e of m.values()) sum += e.bytes;
    let evicted = 0;
    const bySoonest = [...m.entries()].sort((x, y) => x[1].expires - y[1].expires);
    for (const [sha, e] of bySoonest) {
      if (sum + bytes <= p.budgetBytes) break;
      m.delete(sha);
      sum -= e.bytes;
      evicted++;
    }
    m.set(p.sha, { entry: p.entry, bytes, expires: p.now + p.ttlMs });
    return { stored: true, evicted };
  }
}
