// What the parts of the Redis store (redis-store.ts and the files it delegates to: the lease runner, the batch
// lines, the reads) share: the connection, the key names, the one-write-per-turn batch, the stream cap, the hold
// lifetime, the fail-closed guard and the replica acknowledgement.
import type { RedisKeys } from '../contract/redis-keys.ts';
import type { RedisClient } from './redis-connect.ts';
import type { ReplicaAck } from './replica-ack.ts';
import type { WriteBatch } from './write-batch.ts';

export interface ScriptContext {
  redis: RedisClient;
  k: RedisKeys;
  batch: WriteBatch;
  streamMaxLen: number;
  holdTtlMs: number;
  /** Every Redis failure on the request path is a 503 with retry-after, never a hang (RedisStore.guard). */
  guard<T>(what: string, op: () => Promise<T>): Promise<T>;
  ack: ReplicaAck;
}
