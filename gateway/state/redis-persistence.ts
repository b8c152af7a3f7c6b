// Checks at start that Redis keeps what it holds (docs/operations.md: Redis lost its data): the money state is a working
// copy, but usage events not exported yet exist only there, and a Redis that evicts or forgets money keys answers 503
// until a rebuild. Warns, never refuses: managed services often forbid CONFIG, and the operator may know better.
import type { RedisClient } from './redis-connect.ts';

export interface PersistenceFinding {
  setting: string;
  value: string;
  advice: string;
}

/** What the settings say (pure): appendonly off, or an eviction policy that may pick money keys (they have no TTL). */
export function persistenceFindings(config: Record<string, string>): PersistenceFinding[] {
  const out: PersistenceFinding[] = [];
  const aof = config.appendonly;
  if (aof !== undefined && aof !== 'yes')
    out.push({
      setting: 'appendonly',
      value: aof,
      advice:
        'a restart loses everything since the last snapshot: the usage events not exported yet, and the money state until it is rebuilt; set appendonly yes, appendfsync everysec',
    });
  const policy = config['maxmemory-policy'];
  if (policy !== undefined && policy.startsWith('allkeys-'))
    out.push({ setting: 'maxmemory-policy', value: policy, advice: 'under memory pressure Redis may evict balances, holds and key records; set noeviction' });
  return out;
}

/** Reads the settings (CONFIG GET) and returns the findings; null when Redis does not let this user read them. */
export async function checkPersistence(redis: RedisClient): Promise<PersistenceFinding[] | null> {
  try {
    const config: Record<string, string> = {};
    for (const name of ['appendonly', 'maxmemory-policy']) {
      const reply = (await redis.call('CONFIG', 'GET', name)) as string[];
      for (let i = 0; i + 1 < reply.length; i += 2) config[reply[i] as string] = reply[i + 1] as string;
    }
    return persistenceFindings(config);
  } catch {
    return null;
  }
}
