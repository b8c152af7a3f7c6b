// Sign-ins under way: what the callback must find again (state, nonce, PKCE verifier, where to go after), kept on the
// server under the SHA-256 of a random id the browser holds in a cookie, for 10 minutes, and taken exactly once: a
// callback replayed, or arriving in a browser that did not start it, finds nothing.
import { createHash, randomBytes } from 'node:crypto';
import { redisKeys, type RedisKeys } from '../../../gateway/contract/redis-keys.ts';
import type { RedisClient as Redis } from '../../../gateway/state/redis-connect.ts';

export interface PendingFlow {
  state: string;
  nonce: string;
  codeVerifier: string;
  redirectUri: string;
  next: string;
}

export const FLOW_TTL_MS = 10 * 60_000;

export interface FlowStore {
  /** Keeps the flow; returns the id for the browser's cookie. */
  put(flow: PendingFlow, now: number): Promise<string>;
  /** The flow, removed (a second take of the same id finds nothing); null when unknown or expired. */
  take(id: string, now: number): Promise<PendingFlow | null>;
}

function hash(id: string): string {
  return createHash('sha256').update(id).digest('hex');
}

const newId = (): string => randomBytes(32).toString('base64url');

export class MemoryFlows implements FlowStore {
  private readonly flows = new Map<string, { flow: PendingFlow; until: number }>();

  async put(flow: PendingFlow, now: number): Promise<string> {
    for (const [h, f] of this.flows) if (f.until <= now) this.flows.delete(h);
    // Bounded: past 10,000 flows under way the oldest goes (a flood of started sign-ins cannot exhaust the memory).
    if (this.flows.size >= 10_000) this.flows.delete(this.flows.keys().next().value as string);
    const id = newId();
    this.flows.set(hash(id), { flow, until: now + FLOW_TTL_MS });
    return id;
  }

  async take(id: string, now: number): Promise<PendingFlow | null> {
    const h = hash(id);
    const f = this.flows.get(h);
    this.flows.delete(h);
    return f && f.until > now ? f.flow : null;
  }
}

export class RedisFlows implements FlowStore {
  private readonly redis: Redis;
  private readonly names: RedisKeys;

  constructor(redis: Redis, prefix: string) {
    this.redis = redis;
    this.names = redisKeys(prefix);
  }

  async put(flow: PendingFlow, _now: number): Promise<string> {
    const id = newId();
    await this.redis.set(this.names.consoleOidcFlow(hash(id)), JSON.stringify(flow), 'PX', FLOW_TTL_MS);
    return id;
  }

  async take(id: string, _now: number): Promise<PendingFlow | null> {
    const raw = await this.redis.getdel(this.names.consoleOidcFlow(hash(id)));
    return raw ? (JSON.parse(raw) as PendingFlow) : null;
  }
}
