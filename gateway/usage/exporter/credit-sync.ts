// Credits into the Postgres ledger from what the gateways (or the operator) published to Redis: the compiled
// snapshot gives each credit's amount by id; only those the store has applied are recorded (its credits set),
// and the trial credit's amount is read from the account's record, where the store keeps what it granted once.
// So the Postgres ledger credits exactly what the store credited, even if the config changed since.
import type { RedisClient as Redis } from '../../state/redis-connect.ts';
import type pg from 'pg';
import { snapshot as snapshotSchema } from '../../contract/snapshot.ts';
import { redisKeys } from '../../contract/redis-keys.ts';
import { accountKeys } from '../../state/redis-store.ts';
import { recordCredits } from '../postgres/credits.ts';

/** Returns how many credits were new to Postgres (0 when nothing is published yet). */
export async function syncCredits(redis: Redis, pool: pg.Pool, prefix: string): Promise<number> {
  const raw = await redis.get(redisKeys(prefix).appliedSnapshot);
  if (!raw) return 0;
  const accounts = Object.values(snapshotSchema.parse(JSON.parse(raw)).accounts);
  // One command per key, sent together (a pipeline would have to stay in one hash slot on a Redis Cluster).
  const settle = <T>(p: Promise<T>): Promise<[Error | null, T | null]> =>
    p.then(
      (v): [null, T] => [null, v],
      (e: Error): [Error, null] => [e, null],
    );
  const res = await Promise.all(
    accounts.flatMap((a) => {
      const k = accountKeys(prefix, a.name);
      return [settle<unknown>(redis.hget(k.acct, 'trial')), settle<unknown>(redis.smembers(k.credits))];
    }),
  );
  const granted = accounts.flatMap((a, i) => {
    const [trialErr, trial] = res[2 * i] ?? [];
    const [setErr, applied] = res[2 * i + 1] ?? [];
    if (trialErr || setErr || typeof trial !== 'string' || !Array.isArray(applied)) return []; // not applied yet
    const ids = new Set(applied);
    return [{ ...a, trialCreditNano: Number(trial), credits: a.credits.filter((c) => ids.has(c.id)) }];
  });
  return recordCredits(pool, { accounts: Object.fromEntries(granted.map((a) => [a.name, a])) });
}
