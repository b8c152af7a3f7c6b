// Puts console-made key records where gateways look them up, and revokes. The memory store takes the manifests'
// keys plus the console's in one applyConfig (idempotent: credits once by id); in Redis a record is written with
// the same step the config publisher uses (RedisStore.publishKey), but left out of the config's key set, so a process that republishes
// its manifests at start does not remove keys made in the console.
import type { KeyRecord, Snapshot } from '../../gateway/contract/snapshot.ts';
import type { MemoryStore } from '../../gateway/state/memory-store.ts';
import type { RedisStore } from '../../gateway/state/redis-store.ts';

export interface KeyPublisher {
  publish(record: KeyRecord): Promise<void>;
  revoke(hash: string): Promise<void>;
}

export class MemoryPublisher implements KeyPublisher {
  private readonly store: MemoryStore;
  private readonly snapshot: Snapshot;
  private readonly configKeys: KeyRecord[];
  private readonly made = new Map<string, KeyRecord>();

  constructor(store: MemoryStore, snapshot: Snapshot, configKeys: KeyRecord[]) {
    this.store = store;
    this.snapshot = snapshot;
    this.configKeys = configKeys;
  }

  async publish(record: KeyRecord): Promise<void> {
    this.made.set(record.hash, record);
    await this.store.applyConfig(this.snapshot, [...this.configKeys, ...this.made.values()]);
  }

  async revoke(hash: string): Promise<void> {
    await this.store.revoke(hash);
  }
}

export class RedisPublisher implements KeyPublisher {
  private readonly store: RedisStore;

  constructor(store: RedisStore) {
    this.store = store;
  }

  async publish(record: KeyRecord): Promise<void> {
    // Its expiry too, where admission reads it (the same write as the config publisher's).
    await this.store.publishKey(record);
  }

  async revoke(hash: string): Promise<void> {
    await this.store.revoke(hash);
  }
}
