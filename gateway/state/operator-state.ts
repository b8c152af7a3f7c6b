// What the operator does with the shared state, as narrow interfaces (the operator depends on these, not on the
// store): publish the config with its key records and credits, revoke and read keys, read ledgers. One Redis
// connection serves them; the availability board and history (gateway/availability) take it as `redis`.
import type { RecentEvent } from './money-catch-up.ts';
import { publishSnapshot, readCurrentVersion } from '../contract/config-channel.ts';
import { parseDriftRecord, type Drift } from '../contract/money-drift.ts';
import { redisKeys } from '../contract/redis-keys.ts';
import type { KeyRecord, Snapshot } from '../contract/snapshot.ts';
import { LateSweep, type LateQueue } from './late-sweep.ts';
import { MoneyGuard, type GuardLog } from './money-guard.ts';
import type { MoneyRecord, SettledSink } from './money-record.ts';
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
  /** The drifts the exporter's last reconciliation found (none when it found none, or ran not lately). */
  moneyDrift(): Promise<Drift[]>;
}

export interface OperatorState extends ConfigPublisher, KeyAdmin, LedgerReader {
  /** The connection and key prefix, for the availability board and history the leader writes. */
  readonly redis: RedisClient;
  readonly prefix: string;
  close(): Promise<void>;
}

/** The record a Redis that lost its data is rebuilt from (gateway/usage/ledger-money.ts); absent without DATABASE_URL. */
export interface OperatorLedger {
  record(settled: SettledSink): Promise<MoneyRecord[]>;
  recordGrants(redis: RedisClient, prefix: string): Promise<void>;
  /** The recent usage events of these accounts (a promoted Redis Cluster replica's catch-up). */
  recent?(accounts: readonly string[]): Promise<RecentEvent[]>;
  /** The events the exporter committed after a rebuild may have read the ledger (settled by the leader's sweep). */
  late?: LateQueue;
}

export interface OperatorMoney {
  ledger: OperatorLedger | null;
  log: GuardLog;
}

class RedisOperatorState implements OperatorState {
  private readonly store: RedisStore;
  private readonly money: OperatorMoney | null;
  /** Publishes through the money guard (gateway/state/money-guard.ts): a Redis that lost its data is rebuilt first. */
  private guard: MoneyGuard | null = null;
  private sweep: LateSweep | null = null;
  private last: { snapshot: Snapshot; keys: KeyRecord[] } | null = null;

  constructor(store: RedisStore, money: OperatorMoney | null) {
    this.store = store;
    this.money = money;
  }

  get redis(): RedisClient {
    return this.store.redis;
  }

  get prefix(): string {
    return this.store.prefix;
  }

  async publish(snapshot: Snapshot, keys: KeyRecord[]): Promise<void> {
    this.last = { snapshot, keys };
    if (!this.money) return this.apply();
    if (this.guard) return this.guard.publish();
    const { ledger, log } = this.money;
    const { redis, prefix } = this.store;
    this.guard = new MoneyGuard({
      redis,
      prefix,
      publish: () => this.apply(),
      record: ledger ? (settled) => ledger.record(settled) : null,
      recordGrants: ledger ? () => ledger.recordGrants(redis, prefix) : undefined,
      recent: ledger?.recent ? (accounts) => (ledger.recent as NonNullable<OperatorLedger['recent']>)(accounts) : undefined,
      accounts: () => Object.values(this.last?.snapshot.accounts ?? {}),
      log,
    });
    await this.guard.start();
    if (ledger?.late) {
      this.sweep = new LateSweep({ redis, prefix, queue: ledger.late, log });
      this.sweep.start();
    }
  }

  private async apply(): Promise<void> {
    if (!this.last) return;
    const { snapshot, keys } = this.last;
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

  async moneyDrift(): Promise<Drift[]> {
    return parseDriftRecord(await this.store.redis.get(redisKeys(this.store.prefix).moneyDrift));
  }

  async close(): Promise<void> {
    await this.sweep?.stop();
    this.guard?.stop();
    await this.guard?.settled();
    return this.store.close();
  }
}

/**
 * Connects (failing fast if Redis is unreachable). With `money`, publishes guard the money state: the first publish
 * and every later one rebuild a Redis that lost its data (from `money.ledger`, the Postgres ledger) before writing.
 */
export async function connectOperatorState(opts: RedisStoreOptions, money: OperatorMoney | null = null): Promise<OperatorState> {
  return new RedisOperatorState(await RedisStore.connect(opts), money);
}
