// The MCP sessions' last use, shared by every replica, for the idle TTL (gateway/mcp/sessions.ts): a session is
// recorded when it starts (its id, already sealed, and the key hash that opens it), marked at each request, ended
// by DELETE; a sweep claims the sessions idle past the TTL, each by one replica, to end their upstream sessions.
// Redis: one sorted set of last uses and one hash of records, hash-tagged to one Cluster slot.
import { redisKeys } from '../contract/redis-keys.ts';
import type { RedisClient } from './redis-connect.ts';
import { SCRIPTS } from './scripts.ts';

/** What the sweep needs to end a session's upstream sessions. */
export interface IdleSession {
  /** The session's Mcp-Session-Id (sealed: AES-256-GCM under the pepper's key). */
  sealed: string;
  keyHash: string;
}

export interface McpSessionStore {
  start(sid: string, rec: IdleSession, now: number): Promise<void>;
  /** Marks a request of the session; false: unknown, ended, or idle since before `oldest` (then it stays refused). */
  touch(sid: string, now: number, oldest: number): Promise<boolean>;
  end(sid: string): Promise<void>;
  /** Sessions idle since before `oldest`, at most `max`, removed as they are returned. */
  claimIdle(oldest: number, max: number): Promise<IdleSession[]>;
}

export class MemoryMcpSessions implements McpSessionStore {
  private readonly sessions = new Map<string, IdleSession & { last: number }>();

  async start(sid: string, rec: IdleSession, now: number): Promise<void> {
    this.sessions.set(sid, { ...rec, last: now });
  }

  async touch(sid: string, now: number, oldest: number): Promise<boolean> {
    const s = this.sessions.get(sid);
    if (!s || s.last < oldest) return false;
    s.last = now;
    return true;
  }

  async end(sid: string): Promise<void> {
    this.sessions.delete(sid);
  }

  async claimIdle(oldest: number, max: number): Promise<IdleSession[]> {
    const out: IdleSession[] = [];
    for (const [sid, s] of this.sessions) {
      if (out.length >= max) break;
      if (s.last >= oldest) continue;
      this.sessions.delete(sid);
      out.push({ sealed: s.sealed, keyHash: s.keyHash });
    }
    return out;
  }
}

export class RedisMcpSessions implements McpSessionStore {
  private readonly redis: RedisClient;
  private readonly keys: { idle: string; records: string };

  constructor(redis: RedisClient, prefix: string) {
    this.redis = redis;
    this.keys = redisKeys(prefix).mcpSessions;
  }

  async start(sid: string, rec: IdleSession, now: number): Promise<void> {
    // One round trip (no MULTI: the gateway's ACL user has none); the record first, so a claim finds it.
    await this.redis.pipeline().hset(this.keys.records, sid, JSON.stringify(rec)).zadd(this.keys.idle, now, sid).exec();
  }

  async touch(sid: string, now: number, oldest: number): Promise<boolean> {
    return (await SCRIPTS.mcpTouch.run(this.redis, { idle: this.keys.idle }, { sid, now, oldest })) === 1;
  }

  async end(sid: string): Promise<void> {
    await this.redis.pipeline().zrem(this.keys.idle, sid).hdel(this.keys.records, sid).exec();
  }

  async claimIdle(oldest: number, max: number): Promise<IdleSession[]> {
    const recs = (await SCRIPTS.mcpClaimIdle.run(this.redis, this.keys, { oldest, max })) as string[];
    return recs.flatMap((r) => {
      try {
        const v = JSON.parse(r) as IdleSession;
        return typeof v.sealed === 'string' && typeof v.keyHash === 'string' ? [v] : [];
      } catch {
        return [];
      }
    });
  }
}
