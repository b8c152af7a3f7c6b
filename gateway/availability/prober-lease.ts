// One prober among standalone processes that share a Redis: the process holding this lease probes, the others keep
// the rhythm without probing (gateway/availability/monitor.ts), so N processes make one set of probes, not N. The
// lease is a Redis key holding the holder's id with a lifetime; every process asks for it every second (the holder
// renews it) and the holder stops counting itself the holder a margin before it could have expired, so two holders
// never overlap. When the holder stops it hands the key back and another takes it within a second; when it dies,
// within one lifetime.
import { randomUUID } from 'node:crypto';
import type { RedisClient } from '../state/redis-connect.ts';

export const LEASE_TTL_MS = 15_000;

// Keep it when it is ours; take it when nobody holds it. 1: held by us, 0: someone else's. GET, SET and DEL only: the
// commands a standalone process's Redis user already has for the {avail} keys (redis-acl.ts).
const TAKE_OR_RENEW = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
return 0`;

const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

export class ProberLease {
  private readonly redis: RedisClient;
  private readonly key: string;
  private readonly ttlMs: number;
  private readonly id = randomUUID();
  /** Until when (this process's clock) the lease is surely ours: the send time of the last renewal, plus its lifetime, minus a margin. */
  private until = 0;
  private timer: NodeJS.Timeout | null = null;
  private readonly onError?: (err: unknown) => void;

  constructor(redis: RedisClient, prefix: string, o: { ttlMs?: number; onError?: (err: unknown) => void } = {}) {
    this.redis = redis;
    this.key = `${prefix}:{avail}:prober`;
    this.ttlMs = o.ttlMs ?? LEASE_TTL_MS;
    this.onError = o.onError;
  }

  /** True while this process holds the lease. */
  held(): boolean {
    return Date.now() < this.until;
  }

  /** Tries to take or renew the lease now; resolves to whether it is held. */
  async renew(): Promise<boolean> {
    const sent = Date.now();
    try {
      const got = await this.redis.eval(TAKE_OR_RENEW, 1, this.key, this.id, this.ttlMs);
      this.until = Number(got) === 1 ? sent + this.ttlMs - Math.ceil(this.ttlMs / 5) : 0;
    } catch (err) {
      // Redis unreachable: stop probing once the lease may have passed to another process (`until` runs out).
      this.onError?.(err);
    }
    return this.held();
  }

  start(): this {
    void this.renew();
    this.timer = setInterval(() => void this.renew(), Math.min(1000, Math.ceil(this.ttlMs / 3)));
    this.timer.unref();
    return this;
  }

  /** Stops renewing and hands the lease back at once, so another process takes over without waiting out its life. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (this.until === 0) return;
    this.until = 0;
    await this.redis.eval(RELEASE, 1, this.key, this.id).catch((err: unknown) => this.onError?.(err));
  }
}
