// Credits into the Postgres ledger from what the gateways (or the operator) published to Redis: the compiled
// snapshot gives each credit's amount by id; only those the store has applied are recorded (its credits set),
// and the trial credit's amount is read from the account's record, where the store keeps what it granted once.
// So the Postgres ledger credits exactly what the store credited, even if the config changed since.
import type { Redis } from 'ioredis';
import type pg from 'pg';
import { snapshot as snapshotSchema } from '../../contract/snapshot.ts';
import { accountKeys } from '../../state/redis-store.ts';
import { recordCredits } from '../postgres/credits.ts';

/** Returns how many credits were new to Postgres (0 when nothing is published yet). */
export async function syncCredits(redis: Redis, pool: pg.Pool, prefix: string): Promise<number> {
  const raw = await redis.get(`${prefix}:config:snapshot`);
  if (!raw) return 0;
  const accounts = Object.values(snapshotSchema.parse(JSON.parse(raw)).accounts);
  const pipe = redis.pipeline();
  for (const a of accounts) {
    const k = accountKeys(prefix, a.name);
    pipe.hget(k.acct, 'trial');
    pipe.smembers(k.credits);
  }
  const res = (await pipe.exec()) ?? [];
  const granted = accounts.flatMap((a, i) => {
    const [trialErr, trial] = res[2 * i] ?? [];
    const [setErr, applied] = res[2 * i + 1] ?? [];
    if (trialErr || setErr || typeof trial !== 'string' || !Array.isArray(applied)) return []; // not applied yet
    const ids = new Set(applied);
    return [{ ...a, trialCreditNano: Number(trial), credits: a.credits.filter((c) => ids.has(c.id)) }];
  });
  return recordCredits(pool, { accounts: Object.fromEntries(granted.map((a) => [a.name, a])) });
}
