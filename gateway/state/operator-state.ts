// What the operator does with the shared state, as narrow interfaces (the operator depends on these, not on the
// store): publish the config with its key records and credits, revoke and read keys, read ledgers. One Redis
// connection serves them; the availability board and history (gateway/availability) take it as `redis`.
import { publishSnapshot, readCurrentVersion } from '../contract/config-channel.ts';
import { redisKeys } from '../contract/redis-keys.ts';
import type { KeyRecord, Snapshot } from '../contract/snapshot.ts';
import type { RedisClient } from './redis-connect.ts';
import { RedisStore, type RedisStoreOptions } from './redis-store.ts';
import { SCRIPTS } from './scripts.ts';
import type { AccountView, Ledger, MonthSpend } from './store.ts';

export interface ConfigPublisher {
  /** Key records, revocations and credits first, then the snapshot (credentials sealed) becomes `current`. */
  publish(snapshot: Snapshot, keys: KeyRecord[]): Promise<void>;
  /** The version gateways serve now (null before the first publish, or after Redis lost it). */
  currentVersion(): Promise<string | null>;
}

export interface KeyAdmin {
  /** Revokes a key by its HMAC, for good. */
  revoke(hash: string): Promise<void>;
  findKey(hash: string): Promise<KeyRecord | null>;
  /**
   * Removes every key record the config published, revoked ones excepted (they stay, revoked): no gateway admits a
   * key until an operator publishes again. Returns how many went. For the chart's uninstall hook.
   */
  unpublishKeys(): Promise<number>;
}

export interface LedgerReader {
  ledger(account: string): Promise<Ledger>;
  view(account: string, keyName: string, now: number): Promise<AccountView>;
  /** Credited, spent and this month's spend of the account and of the named keys, in one round trip. */
  monthSpend(account: string, keyNames: readonly string[], month: string): Promise<MonthSpend>;
}

export interface OperatorState extends ConfigPublisher, KeyAdmin, LedgerReader {
  /** The connection and key prefix, for the availability board and history the leader writes. */
  readonly redis: RedisClient;
  readonly prefix: string;
  close(): Promise<void>;
}

class RedisOperatorState implements OperatorState {
  private readonly store: RedisStore;

  constructor(store: RedisStore) {
    this.store = store;
  }

  get redis(): RedisClient {
    return this.store.redis;
  }

  get prefix(): string {
    return this.store.prefix;
  }

  async publish(snapshot: Snapshot, keys: KeyRecord[]): Promise<void> {
    await this.store.applyConfig(snapshot, keys);
    // Upstream credentials sealed (AES-256-GCM): no provider key in clear in Redis.
    await publishSnapshot(this.store.redis, this.store.prefix, this.store.seal(snapshot));
  }

  currentVersion(): Promise<string | null> {
    return readCurrentVersion(this.store.redis, this.store.prefix);
  }

  revoke(hash: string): Promise<void> {
    return this.store.revoke(hash);
  }

  findKey(hash: string): Promise<KeyRecord | null> {
    return this.store.findKey(hash);
  }

  async unpublishKeys(): Promise<number> {
    const k = redisKeys(this.store.prefix);
    let removed = 0;
    for (const hash of await this.redis.smembers(k.keys)) {
      if (Number(await SCRIPTS.removeKey.run(this.redis, { record: k.key(hash) }, {})) !== 1) continue;
      await this.redis.srem(k.keys, hash);
      removed++;
    }
    return removed;
  }

  ledger(account: string): Promise<Ledger> {
    return this.store.ledger(account);
  }

  view(account: string, keyName: string, now: number): Promise<AccountView> {
    return this.store.view(account, keyName, now);
  }

  monthSpend(account: string, keyNames: readonly string[], month: string): Promise<MonthSpend> {
    return this.store.monthSpend(account, keyNames, month);
  }

  close(): Promise<void> {
    return this.store.close();
  }
}

/** Connects (failing fast if Redis is unreachable). */
export async function connectOperatorState(opts: RedisStoreOptions): Promise<OperatorState> {
  return new RedisOperatorState(await RedisStore.connect(opts));
}
