// OpenID Connect for a console process, from its environment: the client (discovery started now, so the sign-in page
// knows the provider's origins; a provider down at start is asked again at the first sign-in) and where flows wait.
import type { RedisClient as Redis } from '../../../gateway/state/redis-connect.ts';
import { OidcClient } from './client.ts';
import { MemoryFlows, RedisFlows, type FlowStore } from './flows.ts';
import { oidcSettingsFromEnv } from './settings.ts';
import { MemoryLogouts, RedisLogouts, type LogoutStore } from './logouts.ts';
import { SESSION_TTL_MS } from '../sessions.ts';

export function oidcFromEnv(
  env: Record<string, string | undefined>,
  redis: { redis: Redis; prefix: string } | null,
  warn: (err: unknown) => void,
  sessionMs: number = SESSION_TTL_MS,
): { client: OidcClient; flows: FlowStore; logouts: LogoutStore } | undefined {
  const settings = oidcSettingsFromEnv(env);
  if (!settings) return undefined;
  const client = new OidcClient(settings);
  void client.configuration().catch(warn);
  return {
    client,
    flows: redis ? new RedisFlows(redis.redis, redis.prefix) : new MemoryFlows(),
    // A back-channel logout is kept as long as a session it may end can last.
    logouts: redis ? new RedisLogouts(redis.redis, redis.prefix, sessionMs) : new MemoryLogouts(sessionMs),
  };
}
