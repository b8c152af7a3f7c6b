// Writes money records back into Redis, one atomic step per account (restore-account.lua), many accounts at once.
// An account whose money is live in Redis is left alone, so a restore can never overwrite or double what is there.
import { randomBytes } from 'node:crypto';
import { accountKeys, redisKeys, settledStage } from '../contract/redis-keys.ts';
import { restoreJson, type MoneyRecord } from './money-record.ts';
import type { RedisClient } from './redis-connect.ts';
import { int } from './lua-script.ts';
import { SCRIPTS } from './scripts.ts';
import { inParallel, PUBLISH_PARALLEL } from './parallel.ts';

/** Ids staged per step: about 5 ms of Redis each. */
const STAGE_SLICE = 5000;
/** A staged set whose restore never came (its process died) is dropped after this. */
const STAGE_TTL_MS = 600_000;

/** Restores every record; returns how many accounts were restored (the others were live). */
export async function restoreAccounts(redis: RedisClient, prefix: string, records: readonly MoneyRecord[]): Promise<number> {
  let restored = 0;
  await inParallel(records, PUBLISH_PARALLEL, async (r) => {
    const k = accountKeys(prefix, r.account);
    await redis.sadd(redisKeys(prefix).usageStreams, k.usage);
    const stage = settledStage(prefix, r.account, randomBytes(8).toString('hex'));
    // The ids the ledger recorded lately, staged a slice at a time (a busy account has hundreds of thousands: one
    // step would block Redis for seconds), then made the settled set by the restore's atomic step.
    for (let i = 0; i < r.settled.length; i += STAGE_SLICE) {
      const pairs = r.settled.slice(i, i + STAGE_SLICE).flatMap(([id, at]) => [at, id]);
      if (int(await SCRIPTS.stageSettled.run(redis, { acct: k.acct, stage }, { ttlMs: STAGE_TTL_MS, '...pairs': pairs })) === 0) break;
    }
    const reply = await SCRIPTS.restoreAccount.run(
      redis,
      { acct: k.acct, credits: k.credits, spend: k.spend, stripe: k.stripe, billing: k.billing, settled: k.settled, stage },
      { recordJson: restoreJson(r) },
    );
    restored += int(reply);
  });
  return restored;
}

/**
 * The records of accounts whose money nobody can rebuild (no Postgres): the trial and every credit id marked as
 * granted, with no money, so a publish never grants them again. Their balance is 0 until a new credit id is added.
 */
export function forgottenRecords(accounts: ReadonlyArray<{ name: string; credits: ReadonlyArray<{ id: string }> }>): MoneyRecord[] {
  return accounts.map((a) => ({
    account: a.name,
    trialNano: 0,
    creditIds: a.credits.map((c) => c.id),
    creditedNano: 0,
    spentNano: 0,
    feeNano: 0,
    spend: {},
    stripe: [],
    settled: [],
  }));
}
