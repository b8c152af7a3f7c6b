// Where target states and live-traffic counts meet: in memory (standalone) or in Redis, where every gateway reads the
// states the prober wrote. Every key carries the hash tag {avail}, so on a Redis Cluster they share one slot and a
// pipeline over them is legal.
//
// Redis keys (<p> = prefix):
//   <p>:{avail}:states         HASH  "<model>/<target>" -> TargetStatus JSON (written by the prober)
//   <p>:{avail}:live:<minute>  HASH  "<model>/<target>|c" -> calls, "...|f" -> upstream failures in that minute
//                                    (minute = floor(ms / 60000); expires after LIVE_TTL_S)
import type { RedisClient } from '../state/redis-connect.ts';
import { targetKey, type LiveCounts, type TargetStatus } from './types.ts';

export const LIVE_MINUTES = 5;
const LIVE_TTL_S = 15 * 60;

export interface Board {
  publish(states: readonly TargetStatus[]): Promise<void>;
  states(): Promise<TargetStatus[]>;
  addLive(counts: ReadonlyMap<string, LiveCounts>, now: number): Promise<void>;
  /** Sum of the last `minutes` whole minutes and the current one, per "<model>/<target>". */
  live(now: number, minutes?: number): Promise<Map<string, LiveCounts>>;
}

const minuteOf = (ms: number): number => Math.floor(ms / 60_000);

export class MemoryBoard implements Board {
  private readonly byTarget = new Map<string, TargetStatus>();
  private readonly minutes = new Map<number, Map<string, LiveCounts>>();

  async publish(states: readonly TargetStatus[]): Promise<void> {
    for (const s of states) this.byTarget.set(targetKey(s.model, s.target), s);
  }

  async states(): Promise<TargetStatus[]> {
    return [...this.byTarget.values()];
  }

  async addLive(counts: ReadonlyMap<string, LiveCounts>, now: number): Promise<void> {
    const m = minuteOf(now);
    let table = this.minutes.get(m);
    if (!table) this.minutes.set(m, (table = new Map()));
    for (const [k, c] of counts) {
      const t = table.get(k) ?? { calls: 0, failures: 0 };
      table.set(k, { calls: t.calls + c.calls, failures: t.failures + c.failures });
    }
    for (const old of this.minutes.keys()) if (old < m - LIVE_TTL_S / 60) this.minutes.delete(old);
  }

  async live(now: number, minutes = LIVE_MINUTES): Promise<Map<string, LiveCounts>> {
    const out = new Map<string, LiveCounts>();
    const m = minuteOf(now);
    for (let i = m - minutes; i <= m; i++) {
      for (const [k, c] of this.minutes.get(i) ?? []) {
        const t = out.get(k) ?? { calls: 0, failures: 0 };
        out.set(k, { calls: t.calls + c.calls, failures: t.failures + c.failures });
      }
    }
    return out;
  }
}

export class RedisBoard implements Board {
  private readonly redis: RedisClient;
  private readonly prefix: string;

  constructor(redis: RedisClient, prefix = 'svc') {
    this.redis = redis;
    this.prefix = prefix;
  }

  private key(part: string): string {
    return `${this.prefix}:{avail}:${part}`;
  }

  async publish(states: readonly TargetStatus[]): Promise<void> {
    if (states.length === 0) return;
    await this.redis.hset(this.key('states'), Object.fromEntries(states.map((s) => [targetKey(s.model, s.target), JSON.stringify(s)])));
  }

  async states(): Promise<TargetStatus[]> {
    const all = await this.redis.hgetall(this.key('states'));
    const out: TargetStatus[] = [];
    for (const v of Object.values(all)) {
      try {
        out.push(JSON.parse(v) as TargetStatus);
      } catch {
        // a field another version wrote: ignored
      }
    }
    return out;
  }

  /** One pipeline (one round trip): an HINCRBY per target and outcome seen, and the key's EXPIRE. */
  async addLive(counts: ReadonlyMap<string, LiveCounts>, now: number): Promise<void> {
    if (counts.size === 0) return;
    const key = this.key(`live:${minuteOf(now)}`);
    const p = this.redis.pipeline();
    for (const [k, c] of counts) {
      if (c.calls > 0) p.hincrby(key, `${k}|c`, c.calls);
      if (c.failures > 0) p.hincrby(key, `${k}|f`, c.failures);
    }
    p.expire(key, LIVE_TTL_S);
    const res = await p.exec();
    const err = res?.find(([e]) => e)?.[0];
    if (err) throw err;
  }

  async live(now: number, minutes = LIVE_MINUTES): Promise<Map<string, LiveCounts>> {
    const m = minuteOf(now);
    const p = this.redis.pipeline();
    for (let i = m - minutes; i <= m; i++) p.hgetall(this.key(`live:${i}`));
    const res = (await p.exec()) ?? [];
    const out = new Map<string, LiveCounts>();
    for (const [err, value] of res) {
      if (err) throw err;
      for (const [field, n] of Object.entries(value as Record<string, string>)) {
        const bar = field.lastIndexOf('|');
        const k = field.slice(0, bar);
        const t = out.get(k) ?? { calls: 0, failures: 0 };
        if (field.slice(bar + 1) === 'c') t.calls += Number(n);
        else t.failures += Number(n);
        out.set(k, t);
      }
    }
    return out;
  }
}
