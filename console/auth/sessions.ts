// Server-side sessions: the cookie holds only a random id; the session (who, CSRF token) lives in memory or Redis,
// under the SHA-256 of the id, so a dump of Redis cannot be replayed as a cookie.
import { redisKeys, type RedisKeys } from '../../gateway/contract/redis-keys.ts';
import { createHash, randomBytes } from 'node:crypto';
import type { RedisClient as Redis } from '../../gateway/state/redis-connect.ts';
import type { Principal } from './principal.ts';

export interface Session {
  principal: Principal;
  csrf: string;
  createdAt: number;
  expiresAt: number;
}

export interface SessionStore {
  create(principal: Principal, now: number): Promise<{ id: string; session: Session }>;
  get(id: string, now: number): Promise<Session | null>;
  destroy(id: string): Promise<void>;
}

export const SESSION_TTL_MS = 8 * 3600_000;

function newSession(principal: Principal, now: number, ttlMs: number): { id: string; session: Session } {
  return {
    id: randomBytes(32).toString('base64url'),
    session: { principal, csrf: randomBytes(32).toString('base64url'), createdAt: now, expiresAt: now + ttlMs },
  };
}

function idHash(id: string): string {
  return createHash('sha256').update(id).digest('hex');
}

export class MemorySessions implements SessionStore {
  private readonly sessions = new Map<string, Session>();
  private readonly ttlMs: number;

  constructor(ttlMs = SESSION_TTL_MS) {
    this.ttlMs = ttlMs;
  }

  async create(principal: Principal, now: number): Promise<{ id: string; session: Session }> {
    for (const [h, s] of this.sessions) if (s.expiresAt <= now) this.sessions.delete(h);
    const made = newSession(principal, now, this.ttlMs);
    this.sessions.set(idHash(made.id), made.session);
    return made;
  }

  async get(id: string, now: number): Promise<Session | null> {
    const s = this.sessions.get(idHash(id));
    return s && s.expiresAt > now ? s : null;
  }

  async destroy(id: string): Promise<void> {
    this.sessions.delete(idHash(id));
  }
}

export class RedisSessions implements SessionStore {
  private readonly redis: Redis;
  private readonly names: RedisKeys;
  private readonly ttlMs: number;

  constructor(redis: Redis, prefix: string, ttlMs = SESSION_TTL_MS) {
    this.redis = redis;
    this.names = redisKeys(prefix);
    this.ttlMs = ttlMs;
  }

  private key(id: string): string {
    return this.names.consoleSession(idHash(id));
  }

  async create(principal: Principal, now: number): Promise<{ id: string; session: Session }> {
    const made = newSession(principal, now, this.ttlMs);
    await this.redis.set(this.key(made.id), JSON.stringify(made.session), 'PX', this.ttlMs);
    return made;
  }

  async get(id: string, now: number): Promise<Session | null> {
    const raw = await this.redis.get(this.key(id));
    if (!raw) return null;
    const s = JSON.parse(raw) as Session;
    return s.expiresAt > now ? s : null;
  }

  async destroy(id: string): Promise<void> {
    await this.redis.del(this.key(id));
  }
}
