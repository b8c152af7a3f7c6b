// Failed sign-ins are limited per client address: at most `max` in a sliding window, then refused until the oldest
// failure leaves the window. Successful sign-ins do not count. In memory for one process (standalone), in Redis when
// several console replicas share the work (a sorted set of failure times per address, expiring with the window).
import { redisKeys, type RedisKeys } from '../../gateway/contract/redis-keys.ts';
import type { RedisClient as Redis } from '../../gateway/state/redis-connect.ts';

export interface SignInLimit {
  /** Seconds to wait before another attempt from this address is looked at (0 = go ahead). */
  retryAfterSec(address: string, now: number): Promise<number>;
  fail(address: string, now: number): Promise<void>;
}

export const MAX_FAILURES = 5;
export const WINDOW_MS = 5 * 60_000;

function wait(oldest: number | undefined, count: number, now: number, windowMs: number, max: number): number {
  if (count < max || oldest === undefined) return 0;
  return Math.max(1, Math.ceil((oldest + windowMs - now) / 1000));
}

export class MemorySignInLimit implements SignInLimit {
  private readonly failures = new Map<string, number[]>();
  private readonly max: number;
  private readonly windowMs: number;

  constructor(max = MAX_FAILURES, windowMs = WINDOW_MS) {
    this.max = max;
    this.windowMs = windowMs;
  }

  async retryAfterSec(address: string, now: number): Promise<number> {
    const recent = this.recent(address, now);
    return wait(recent.at(-this.max), recent.length, now, this.windowMs, this.max);
  }

  async fail(address: string, now: number): Promise<void> {
    const recent = this.recent(address, now);
    recent.push(now);
    this.failures.set(address, recent.slice(-this.max));
    if (this.failures.size > 10_000) {
      for (const [a, times] of this.failures) if ((times.at(-1) ?? 0) <= now - this.windowMs) this.failures.delete(a);
    }
  }

  private recent(address: string, now: number): number[] {
    return (this.failures.get(address) ?? []).filter((t) => t > now - this.windowMs);
  }
}

export class RedisSignInLimit implements SignInLimit {
  private readonly redis: Redis;
  private readonly names: RedisKeys;
  private readonly max: number;
  private readonly windowMs: number;

  constructor(redis: Redis, prefix: string, max = MAX_FAILURES, windowMs = WINDOW_MS) {
    this.redis = redis;
    this.names = redisKeys(prefix);
    this.max = max;
    this.windowMs = windowMs;
  }

  private key(address: string): string {
    return this.names.consoleSignIn(address);
  }

  async retryAfterSec(address: string, now: number): Promise<number> {
    const k = this.key(address);
    await this.redis.zremrangebyscore(k, '-inf', now - this.windowMs);
    const recent = (await this.redis.zrange(k, -this.max, -1, 'WITHSCORES')).filter((_, i) => i % 2 === 1).map(Number);
    return wait(recent[0], recent.length, now, this.windowMs, this.max);
  }

  async fail(address: string, now: number): Promise<void> {
    const k = this.key(address);
    await this.redis.zadd(k, now, `${now}-${Math.random().toString(36).slice(2, 8)}`);
    await this.redis.pexpire(k, this.windowMs);
  }
}
