// The Redis side of the exporter: the usage streams the gateways append to (gateway/state/redis-store.ts, "Usage
// stream format"), read through one consumer group shared by every exporter replica.
import { redisKeys } from '../../contract/redis-keys.ts';
import type { RedisClient as Redis } from '../../state/redis-connect.ts';
import { isCluster } from '../../state/redis-connect.ts';
import { autoclaimReply, consumersReply, deliveriesReply, groupsReply, oldestPendingReply, readReply, type Entry, type GroupInfo } from './redis-replies.ts';
import { compareIds, safeTrimId } from './stream-ids.ts';

export const GROUP = 'usage-export';
/** Streams per XREADGROUP: bounds one read to READ_CHUNK x count entries. */
const READ_CHUNK = 32;

export interface StreamPosition extends GroupInfo {
  stream: string;
  oldestPending: string | null;
  /** The first entry not delivered yet, when lag > 0. */
  firstUndelivered: string | null;
}

export class UsageStreams {
  readonly streams: string[] = [];
  private readonly known = new Set<string>();
  private readonly redis: Redis;
  private readonly usageStreams: string;
  readonly consumer: string;
  private rotation = 0;

  constructor(redis: Redis, prefix: string, consumer: string) {
    this.redis = redis;
    this.usageStreams = redisKeys(prefix).usageStreams;
    this.consumer = consumer;
  }

  /** Picks up streams registered since the last call and makes sure the group exists on each. */
  async discover(): Promise<number> {
    const names = (await this.redis.smembers(this.usageStreams)).sort();
    for (const s of names) {
      if (this.known.has(s)) continue;
      await this.ensureGroup(s);
      this.known.add(s);
      this.streams.push(s);
    }
    return this.streams.length;
  }

  /** From the stream's first entry: entries written before any exporter ran are exported too. */
  async ensureGroup(stream: string): Promise<void> {
    try {
      await this.redis.xgroup('CREATE', stream, GROUP, '0', 'MKSTREAM');
    } catch (err) {
      if (!String(err).includes('BUSYGROUP')) throw err;
    }
  }

  /** New entries, up to about `count` in all, round-robin over the streams so none starves. */
  async readNew(count: number): Promise<Entry[]> {
    const out: Entry[] = [];
    const n = this.streams.length;
    if (n === 0) return out;
    const start = this.rotation++ % n;
    const order = [...this.streams.slice(start), ...this.streams.slice(0, start)];
    // On a Redis Cluster every stream is in its account's own hash slot: one XREADGROUP per stream, sent together.
    const cluster = isCluster(this.redis);
    for (let i = 0; i < order.length && out.length < count; i += READ_CHUNK) {
      const keys = order.slice(i, i + READ_CHUNK);
      const left = Math.max(1, count - out.length);
      const replies = cluster ? await Promise.all(keys.map((k) => this.readGroup([k], Math.ceil(left / keys.length)))) : [await this.readGroup(keys, left)];
      for (const r of replies) out.push(...r);
    }
    return out;
  }

  private async readGroup(keys: string[], per: number): Promise<Entry[]> {
    try {
      return readReply(await this.redis.xreadgroup('GROUP', GROUP, this.consumer, 'COUNT', per, 'STREAMS', ...keys, ...keys.map(() => '>')));
    } catch (err) {
      // The group vanished (the stream was deleted, or Redis restarted without persistence): recreate it.
      if (!String(err).includes('NOGROUP')) throw err;
      for (const k of keys) await this.ensureGroup(k);
      return [];
    }
  }

  /** Entries pending on another consumer for at least `minIdleMs` (it died or hangs), now ours. */
  async claim(stream: string, minIdleMs: number, cursor: string, count: number): Promise<{ next: string; entries: Entry[]; deleted: string[] }> {
    const raw = await this.redis.xautoclaim(stream, GROUP, this.consumer, minIdleMs, cursor, 'COUNT', count);
    return autoclaimReply(stream, raw);
  }

  /** How many times each of these pending entries was delivered. */
  async deliveries(stream: string, ids: string[]): Promise<Map<string, number>> {
    if (ids.length === 0) return new Map();
    const sorted = [...ids].sort(compareIds);
    const raw = await this.redis.xpending(stream, GROUP, sorted[0] as string, sorted[sorted.length - 1] as string, ids.length + 1000, this.consumer);
    return deliveriesReply(raw);
  }

  /** Acknowledges entries, by stream, in one round trip. */
  async ack(entries: readonly Entry[]): Promise<number> {
    const byStream = new Map<string, string[]>();
    for (const e of entries) byStream.set(e.stream, [...(byStream.get(e.stream) ?? []), e.id]);
    // One XACK per stream, sent together (a pipeline would have to stay in one hash slot on a Redis Cluster).
    const counts = await Promise.all([...byStream].map(([s, ids]) => this.redis.xack(s, GROUP, ...ids)));
    return counts.reduce((n: number, c) => n + Number(c), 0);
  }

  async position(stream: string): Promise<StreamPosition | null> {
    const group = groupsReply(await this.redis.xinfo('GROUPS', stream)).find((g) => g.name === GROUP);
    if (!group) return null;
    const oldestPending = group.pending > 0 ? oldestPendingReply(await this.redis.xpending(stream, GROUP)) : null;
    let firstUndelivered: string | null = null;
    if (group.lag !== 0) {
      const next = await this.redis.xrange(stream, `(${group.lastDelivered}`, '+', 'COUNT', 1);
      firstUndelivered = next[0]?.[0] ?? null;
    }
    return { stream, ...group, oldestPending, firstUndelivered };
  }

  /** Trims what the group has acknowledged; returns the number of entries removed. */
  async trim(p: StreamPosition): Promise<number> {
    return Number(await this.redis.xtrim(p.stream, 'MINID', safeTrimId(p)));
  }

  /** Forgets consumers of dead exporters: nothing pending and idle for `idleMs`. */
  async pruneConsumers(stream: string, idleMs: number): Promise<void> {
    for (const c of consumersReply(await this.redis.xinfo('CONSUMERS', stream, GROUP))) {
      if (c.name !== this.consumer && c.pending === 0 && c.idleMs >= idleMs) await this.redis.xgroup('DELCONSUMER', stream, GROUP, c.name);
    }
  }
}
