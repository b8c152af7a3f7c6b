// What the console itself remembers about keys, beside the store: keys it created (their record, which holds only
// the HMAC), who did what, and rotations' pending revocations. Kept in Redis with REDIS_URL (it survives restarts of
// every process), else in memory, optionally mirrored to a JSON file (SVC_CONSOLE_STATE) so a restart keeps it.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { RedisClient as Redis } from '../../gateway/state/redis-connect.ts';
import type { KeyRecord } from '../../gateway/contract/snapshot.ts';

export interface KeyEntry {
  account: string;
  name: string;
  hash: string;
  /** Made in the console (record kept here) or from the manifests (only its revocation is kept here). */
  origin: 'console' | 'config';
  record: KeyRecord | null;
  createdAt: string | null;
  createdBy: string | null;
  /** A rotation's grace period ends then, and the key is revoked. */
  revokeAt: number | null;
  revokedAt: number | null;
  revokedBy: string | null;
}

export interface KeyRegistry {
  all(): Promise<KeyEntry[]>;
  put(e: KeyEntry): Promise<void>;
}

const field = (e: { account: string; name: string }): string => `${e.account}/${e.name}`;

export class MemoryRegistry implements KeyRegistry {
  private readonly entries = new Map<string, KeyEntry>();
  private readonly file: string | null;

  constructor(file: string | null = null) {
    this.file = file;
    if (file && existsSync(file)) {
      for (const e of JSON.parse(readFileSync(file, 'utf8')) as KeyEntry[]) this.entries.set(field(e), e);
    }
  }

  async all(): Promise<KeyEntry[]> {
    return [...this.entries.values()];
  }

  async put(e: KeyEntry): Promise<void> {
    this.entries.set(field(e), e);
    if (!this.file) return;
    const tmp = `${this.file}.tmp`;
    writeFileSync(tmp, JSON.stringify([...this.entries.values()], null, 1), { mode: 0o600 });
    renameSync(tmp, this.file);
  }
}

export class RedisRegistry implements KeyRegistry {
  private readonly redis: Redis;
  private readonly key: string;

  constructor(redis: Redis, prefix: string) {
    this.redis = redis;
    this.key = `${prefix}:console:keys`;
  }

  async all(): Promise<KeyEntry[]> {
    return Object.values(await this.redis.hgetall(this.key)).map((v) => JSON.parse(v) as KeyEntry);
  }

  async put(e: KeyEntry): Promise<void> {
    await this.redis.hset(this.key, field(e), JSON.stringify(e));
  }
}
