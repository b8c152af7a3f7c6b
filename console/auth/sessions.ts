// Server-side sessions: the cookie holds only a random id; the session (who, CSRF token) lives in memory or Redis,
// under the SHA-256 of the id, so a dump of Redis cannot be replayed as a cookie. A Kubernetes sign-in also keeps its
// token sealed under the id (sign-in-token.ts), to be reviewed again, and ends no later than the token's expiry.
import { redisKeys, type RedisKeys } from '../../gateway/contract/redis-keys.ts';
import { createHash, randomBytes } from 'node:crypto';
import type { RedisClient as Redis } from '../../gateway/state/redis-connect.ts';
import type { Principal } from './principal.ts';
import { sealToken } from './sign-in-token.ts';

export interface Session {
  principal: Principal;
  csrf: string;
  createdAt: number;
  expiresAt: number;
  /** The sign-in token, sealed under the session id; absent for the admin token (nothing to review again). */
  sealedToken?: string;
  /** When the token was last found valid (ms). */
  reviewedAt?: number;
  /** An OpenID Connect sign-in: its tokens sealed under the session id, and until when its ID token is good. */
  oidc?: OidcSession;
}

export interface OidcSession {
  /** The person's subject at the provider (`sub`). */
  sub: string;
  /** The provider's session id (`sid` of the ID token), which a back-channel logout may name. */
  sid?: string;
  /** The ID token (sealed), for the provider's end-session endpoint (id_token_hint). */
  sealedIdToken: string;
  /** The refresh token (sealed), when the provider gave one. */
  sealedRefresh?: string;
  /** The ID token's expiry (ms): then the session is refreshed with the refresh token, or ends. */
  validUntil: number;
}

/** What an OpenID Connect sign-in adds to a session. */
export interface OidcSignIn {
  sub: string;
  sid?: string;
  idToken: string;
  refreshToken?: string;
  expiresAt: number;
}

/** What a sign-in adds to a session: the token to review again, and when it stops being valid. */
export interface SignInToken {
  token: string;
  notAfter: number | null;
}

export interface SessionStore {
  create(principal: Principal, now: number, token?: SignInToken, oidc?: OidcSignIn): Promise<{ id: string; session: Session }>;
  get(id: string, now: number): Promise<Session | null>;
  /** Writes back a session that is still there (after a review); its end stays as it was. */
  update(id: string, session: Session, now: number): Promise<void>;
  destroy(id: string): Promise<void>;
}

export const SESSION_TTL_MS = 8 * 3600_000;

function newSession(
  principal: Principal,
  now: number,
  ttlMs: number,
  token: SignInToken | undefined,
  oidc: OidcSignIn | undefined,
): { id: string; session: Session } {
  const id = randomBytes(32).toString('base64url');
  // A token already past its expiry by our clock was still accepted (clock skew): the reviews end such a session.
  const notAfter = token?.notAfter != null && token.notAfter > now ? token.notAfter : Infinity;
  // An ID token bounds the session unless a refresh token can renew it (then only the session's own limit does).
  const oidcEnd = oidc && !oidc.refreshToken ? Math.max(oidc.expiresAt, now + 1000) : Infinity;
  const expiresAt = Math.min(now + ttlMs, notAfter, oidcEnd);
  const session: Session = { principal, csrf: randomBytes(32).toString('base64url'), createdAt: now, expiresAt };
  if (oidc) {
    session.oidc = {
      sub: oidc.sub,
      ...(oidc.sid ? { sid: oidc.sid } : {}),
      sealedIdToken: sealToken(id, oidc.idToken),
      ...(oidc.refreshToken ? { sealedRefresh: sealToken(id, oidc.refreshToken) } : {}),
      validUntil: oidc.expiresAt,
    };
  }
  return { id, session: token ? { ...session, sealedToken: sealToken(id, token.token), reviewedAt: now } : session };
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

  async create(principal: Principal, now: number, token?: SignInToken, oidc?: OidcSignIn): Promise<{ id: string; session: Session }> {
    for (const [h, s] of this.sessions) if (s.expiresAt <= now) this.sessions.delete(h);
    const made = newSession(principal, now, this.ttlMs, token, oidc);
    this.sessions.set(idHash(made.id), made.session);
    return made;
  }

  async get(id: string, now: number): Promise<Session | null> {
    const s = this.sessions.get(idHash(id));
    return s && s.expiresAt > now ? s : null;
  }

  async update(id: string, session: Session, now: number): Promise<void> {
    if (session.expiresAt > now && this.sessions.has(idHash(id))) this.sessions.set(idHash(id), session);
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

  async create(principal: Principal, now: number, token?: SignInToken, oidc?: OidcSignIn): Promise<{ id: string; session: Session }> {
    const made = newSession(principal, now, this.ttlMs, token, oidc);
    await this.redis.set(this.key(made.id), JSON.stringify(made.session), 'PX', made.session.expiresAt - now);
    return made;
  }

  async get(id: string, now: number): Promise<Session | null> {
    const raw = await this.redis.get(this.key(id));
    if (!raw) return null;
    const s = JSON.parse(raw) as Session;
    return s.expiresAt > now ? s : null;
  }

  async update(id: string, session: Session, now: number): Promise<void> {
    const left = session.expiresAt - now;
    // XX: a session signed out meanwhile stays out.
    if (left > 0) await this.redis.set(this.key(id), JSON.stringify(session), 'PX', left, 'XX');
  }

  async destroy(id: string): Promise<void> {
    await this.redis.del(this.key(id));
  }
}
