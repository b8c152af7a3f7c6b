// The whole keyspace as text (every key under a prefix, read by its type): what a secrets-at-rest check searches.
import { scanAll, type RedisClient } from '../../gateway/state/redis-connect.ts';

/** Every value of every key of the whole keyspace (every master of a Cluster), as text. */
export async function keyspaceText(redis: RedisClient, prefix: string): Promise<{ keys: number; text: string }> {
  const keys = await scanAll(redis, `${prefix}*`);
  const parts: string[] = [];
  for (const k of keys) {
    const type = await redis.type(k);
    const v =
      type === 'string'
        ? await redis.get(k)
        : type === 'hash'
          ? await redis.hgetall(k)
          : type === 'list'
            ? await redis.lrange(k, 0, -1)
            : type === 'set'
              ? await redis.smembers(k)
              : type === 'zset'
                ? await redis.zrange(k, 0, -1, 'WITHSCORES')
                : type === 'stream'
                  ? await redis.xrange(k, '-', '+')
                  : `(type ${type})`;
    parts.push(k, JSON.stringify(v));
  }
  return { keys: keys.length, text: parts.join('\n') };
}
