// Replicas that must acknowledge a write (RedisStoreOptions.waitReplicas): WAIT after the script, on the connection
// of the key's node (its slot in a Cluster). With 0 (the default) every write counts as acknowledged at once.
import type { RedisClient } from './redis-connect.ts';

export class ReplicaAck {
  private readonly redis: RedisClient;
  readonly replicas: number;
  readonly timeoutMs: number;

  constructor(redis: RedisClient, replicas: number, timeoutMs: number) {
    this.redis = redis;
    this.replicas = replicas;
    this.timeoutMs = timeoutMs;
  }

  /** True when enough replicas have the writes so far on `key`'s node. */
  async ok(key: string): Promise<boolean> {
    if (this.replicas <= 0) return true;
    const res = await this.redis.pipeline().exists(key).wait(this.replicas, this.timeoutMs).exec();
    const [err, acked] = res?.[1] ?? [];
    if (err) throw err;
    return Number(acked) >= this.replicas;
  }

  /** "by N replica(s) in T ms", for the error of a write not acknowledged. */
  get what(): string {
    return `by ${this.replicas} replica(s) in ${this.timeoutMs} ms`;
  }
}
