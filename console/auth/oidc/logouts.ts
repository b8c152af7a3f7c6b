// Back-channel logouts received (OpenID Connect Back-Channel Logout 1.0): the provider tells the console that a
// session at the provider (`sid`) or everything of a person (`sub`) has ended. The console keeps that as a mark, in
// memory or Redis (shared by every console process), as long as a session can last; a session whose provider
// session is marked, or whose person is marked after the session began, ends at its next request.
import { createHash } from 'node:crypto';
import { redisKeys, type RedisKeys } from '../../../gateway/contract/redis-keys.ts';
import type { RedisClient as Redis } from '../../../gateway/state/redis-connect.ts';

export interface LogoutMark {
  sub?: string;
  sid?: string;
}

export interface LogoutStore {
  /** Records a logout at `now`, kept for `keepMs` (the longest a session lasts). */
  mark(m: LogoutMark, now: number): Promise<void>;
  /** Whether a session (its provider subject, session id, start) was ended by a logout. */
  ended(s: { sub: string; sid?: string; createdAt: number }): Promise<boolean>;
}

const hash = (v: string): string => createHash('sha256').update(v).digest('hex');

/** With a sid, the provider ended that session only; without one, every session of the subject until now. */
function entries(m: LogoutMark): Array<['sid' | 'sub', string]> {
  if (m.sid) return [['sid', m.sid]];
  return m.sub ? [['sub', m.sub]] : [];
}

export class MemoryLogouts implements LogoutStore {
  private readonly marks = new Map<string, { at: number; until: number }>();
  private readonly keepMs: number;

  constructor(keepMs: number) {
    this.keepMs = keepMs;
  }

  async mark(m: LogoutMark, now: number): Promise<void> {
    for (const [k, v] of this.marks) if (v.until <= now) this.marks.delete(k);
    // Bounded, as the flows: past 100,000 marks the oldest goes.
    if (this.marks.size >= 100_000) this.marks.delete(this.marks.keys().next().value as string);
    for (const [kind, v] of entries(m)) this.marks.set(`${kind}:${hash(v)}`, { at: now, until: now + this.keepMs });
  }

  async ended(s: { sub: string; sid?: string; createdAt: number }): Promise<boolean> {
    if (s.sid && this.marks.has(`sid:${hash(s.sid)}`)) return true;
    const bySub = this.marks.get(`sub:${hash(s.sub)}`);
    return bySub !== undefined && bySub.at >= s.createdAt;
  }
}

export class RedisLogouts implements LogoutStore {
  private readonly redis: Redis;
  private readonly names: RedisKeys;
  private readonly keepMs: number;

  constructor(redis: Redis, prefix: string, keepMs: number) {
    this.redis = redis;
    this.names = redisKeys(prefix);
    this.keepMs = keepMs;
  }

  async mark(m: LogoutMark, now: number): Promise<void> {
    for (const [kind, v] of entries(m)) await this.redis.set(this.names.consoleOidcLogout(kind, hash(v)), String(now), 'PX', this.keepMs);
  }

  async ended(s: { sub: string; sid?: string; createdAt: number }): Promise<boolean> {
    if (s.sid && (await this.redis.exists(this.names.consoleOidcLogout('sid', hash(s.sid)))) > 0) return true;
    const at = await this.redis.get(this.names.consoleOidcLogout('sub', hash(s.sub)));
    return at !== null && Number(at) >= s.createdAt;
  }
}
