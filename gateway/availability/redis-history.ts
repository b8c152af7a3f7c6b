// The history in Redis, for a cluster without Postgres: the operator's leader (the only prober) writes it, every
// console reads it. Same {avail} hash tag as the board.
//   <p>:{avail}:seg:<model>   STRING  JSON Segment[] of the last 90 days (merged, so small while all is well)
//   <p>:{avail}:incidents     HASH    incident id -> Incident JSON (with its updates)
//   <p>:{avail}:declared      STRING  JSON Incident[] of the Incident objects (written by the leader)
import type { RedisClient } from '../state/redis-connect.ts';
import type { History, Round } from './history.ts';
import type { Incident } from './types.ts';
import { appendSegment, DAY_MS, type Segment } from './uptime.ts';

const KEEP_MS = 90 * DAY_MS;

export class RedisHistory implements History {
  private readonly redis: RedisClient;
  private readonly prefix: string;

  constructor(redis: RedisClient, prefix = 'svc') {
    this.redis = redis;
    this.prefix = prefix;
  }

  private key(part: string): string {
    return `${this.prefix}:{avail}:${part}`;
  }

  private async read(model: string): Promise<Segment[]> {
    const raw = await this.redis.get(this.key(`seg:${model}`));
    try {
      return raw ? (JSON.parse(raw) as Segment[]) : [];
    } catch {
      return [];
    }
  }

  /** Read, merge, write: one writer (the leader), so no lost update. */
  async addRound(r: Round): Promise<void> {
    const s = await this.read(r.model);
    appendSegment(s, { from: r.at, to: r.at + r.intervalMs, state: r.state });
    while (s.length > 1 && (s[0] as Segment).to < r.at - KEEP_MS) s.shift();
    await this.redis.set(this.key(`seg:${r.model}`), JSON.stringify(s));
  }

  async segments(model: string, since: number): Promise<Segment[]> {
    return (await this.read(model)).filter((s) => s.to > since);
  }

  async saveIncident(i: Incident): Promise<void> {
    await this.redis.hset(this.key('incidents'), i.id, JSON.stringify(i));
  }

  async incidents(since: number): Promise<Incident[]> {
    const all = Object.values(await this.redis.hgetall(this.key('incidents'))).map((v) => JSON.parse(v) as Incident);
    return all.filter((i) => i.resolvedAt === null || i.updatedAt >= since).sort((a, b) => b.createdAt - a.createdAt);
  }

  async setDeclared(json: string): Promise<void> {
    await this.redis.set(this.key('declared'), json);
  }

  async declared(): Promise<Incident[]> {
    const raw = await this.redis.get(this.key('declared'));
    try {
      return raw ? (JSON.parse(raw) as Incident[]) : [];
    } catch {
      return [];
    }
  }

  async close(): Promise<void> {}
}
