// "Last used" of each key, for the console: recorded when a call is admitted, without a write per call. The memory
// form keeps the exact time; the Redis form writes a key's time at most once a minute per process (HSET on one hash),
// so the console shows it to within a minute, and Postgres is never written per call.
import { redisKeys } from '../contract/redis-keys.ts';
import type { RedisClient } from './redis-connect.ts';
import type { AdmitDecision, AdmitRequest, Store } from './store.ts';

export interface LastUsed {
  touch(hash: string, now: number): void;
  /** Latest known use of each key hash (absent: never used, as far as this record knows). */
  read(hashes: string[]): Promise<Map<string, number>>;
}

export class MemoryLastUsed implements LastUsed {
  private readonly times = new Map<string, number>();

  touch(hash: string, now: number): void {
    this.times.set(hash, now);
  }

  async read(hashes: string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    for (const h of hashes) {
      const t = this.times.get(h);
      if (t !== undefined) out.set(h, t);
    }
    return out;
  }
}

export const LAST_USED_WRITE_EVERY_MS = 60_000;

export class RedisLastUsed implements LastUsed {
  private readonly redis: RedisClient;
  private readonly key: string;
  private readonly written = new Map<string, number>();

  constructor(redis: RedisClient, prefix: string) {
    this.redis = redis;
    this.key = redisKeys(prefix).lastUsed;
  }

  touch(hash: string, now: number): void {
    const last = this.written.get(hash);
    if (last !== undefined && now - last < LAST_USED_WRITE_EVERY_MS) return;
    this.written.set(hash, now);
    if (this.written.size > 100_000) this.written.clear();
    // Best effort, off the call's path: a lost write only makes "last used" older.
    this.redis.hset(this.key, hash, String(now)).catch(() => this.written.delete(hash));
  }

  async read(hashes: string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    if (hashes.length === 0) return out;
    const values = await this.redis.hmget(this.key, ...hashes);
    hashes.forEach((h, i) => {
      const v = values[i];
      if (v) out.set(h, Number(v));
    });
    return out;
  }
}

/** The store, with each admitted call's key touched in `lastUsed` (the pipeline itself is unchanged). */
export function withLastUsed(store: Store, lastUsed: LastUsed): Store {
  return {
    applyConfig: (snapshot, keys) => store.applyConfig(snapshot, keys),
    findKey: (hash) => store.findKey(hash),
    admit: async (req: AdmitRequest): Promise<AdmitDecision> => {
      const decision = await store.admit(req);
      if (decision.ok) lastUsed.touch(req.key.hash, req.now);
      return decision;
    },
    settle: (hold, s) => store.settle(hold, s),
    record: (event) => store.record(event),
    view: (account, keyName, now) => store.view(account, keyName, now),
    close: () => store.close(),
    ...(store.responseCache ? { responseCache: store.responseCache } : {}),
    ...(store.parts ? { parts: store.parts } : {}),
  };
}
