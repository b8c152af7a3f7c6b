// OpenID Connect for a console process, from its environment: the client (discovery started now, so the sign-in page
// knows the provider's origins; a provider down at start is asked again at the first sign-in) and where flows wait.
import type { RedisClient as Redis } from '../../../gateway/state/redis-connect.ts';
import { OidcClient } from './client.ts';
import { MemoryFlows, RedisFlows, type FlowStore } from './flows.ts';
import { oidcSettingsFromEnv } from './settings.ts';

export function oidcFromEnv(
  env: Record<string, string | undefined>,
  redis: { redis: Redis; prefix: string } | null,
  warn: (err: unknown) => void,
): { client: OidcClient; flows: FlowStore } | undefined {
  const settings = oidcSettingsFromEnv(env);
  if (!settings) return undefined;
  const client = new OidcClient(settings);
  void client.configuration().catch(warn);
  return { client, flows: redis ? new RedisFlows(redis.redis, redis.prefix) : new MemoryFlows() };
}
