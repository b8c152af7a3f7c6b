// Everything Redis and Postgres hold, as text, to count a key's occurrences in it (expected: 0).
import type { Redis } from 'ioredis';
import type pg from 'pg';

export async function redisText(redis: Redis): Promise<string> {
  const out: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'COUNT', 500);
    cursor = next;
    for (const k of keys) {
      out.push(k);
      const type = await redis.type(k);
      if (type === 'string') out.push((await redis.get(k)) ?? '');
      else if (type === 'hash') out.push(JSON.stringify(await redis.hgetall(k)));
      else if (type === 'set') out.push((await redis.smembers(k)).join('\n'));
      else if (type === 'zset') out.push((await redis.zrange(k, 0, -1)).join('\n'));
      else if (type === 'list') out.push((await redis.lrange(k, 0, -1)).join('\n'));
      else if (type === 'stream') out.push(JSON.stringify(await redis.xrange(k, '-', '+')));
      else out.push(`(unread type ${type})`);
    }
  } while (cursor !== '0');
  return out.join('\n');
}

export async function postgresText(pool: pg.Pool): Promise<string> {
  const tables = await pool.query<{ t: string }>(`SELECT format('%I.%I', schemaname, tablename) AS t FROM pg_tables
    WHERE schemaname NOT IN ('pg_catalog', 'information_schema')`);
  const out: string[] = [];
  for (const { t } of tables.rows) {
    const r = await pool.query<{ s: string | null }>(`SELECT string_agg(x::text, E'\\n') AS s FROM ${t} x`);
    out.push(`${t}\n${r.rows[0]?.s ?? ''}`);
  }
  return out.join('\n');
}

export function occurrences(haystack: string, key: string): number {
  // The whole key, and its secret body alone (a store that dropped the prefix would still leak it).
  const body = key.slice('sk-svc-'.length);
  return haystack.split(key).length - 1 + haystack.split(body).length - 1;
}
