// Writes money records back into Redis, one atomic step per account (restore-account.lua), many accounts at once.
// An account whose money is live in Redis is left alone, so a restore can never overwrite or double what is there.
import { randomBytes } from 'node:crypto';
import { accountKeys, redisKeys, settledStage } from '../contract/redis-keys.ts';
import { restoreJson, type MoneyRecord, type SettledSink } from './money-record.ts';
import type { RedisClient } from './redis-connect.ts';
import { int } from './lua-script.ts';
import { SCRIPTS } from './scripts.ts';
import { inParallel, PUBLISH_PARALLEL } from './parallel.ts';

/** Ids staged per step: about 5 ms of Redis each. */
const STAGE_SLICE = 5000;
/** A staged set whose restore never came (its process died) is dropped after this. */
const STAGE_TTL_MS = 600_000;

/**
 * One rebuild's staging of the ids the ledger recorded lately (MoneyRecord's SettledSink): each account's go to a staged
 * set in Redis a slice at a time, as the ledger is read (a busy account has hundreds of thousands: one step would block
 * Redis for seconds, and holding them all would take the process past its memory), then the restore's atomic step
 * makes the staged set the account's settled set. Nothing is staged for an account whose money is live.
 */
export class SettledStage {
  private readonly token = randomBytes(8).toString('hex');
  private readonly live = new Set<string>();
  private readonly redis: RedisClient;
  private readonly prefix: string;

  constructor(redis: RedisClient, prefix: string) {
    this.redis = redis;
    this.prefix = prefix;
  }

  /** The account's staged set (absent in Redis when nothing was staged for it). */
  key(account: string): string {
    return settledStage(this.prefix, account, this.token);
  }

  /** Stages more of the account's ids (the SettledSink); an account found live is skipped from then on. */
  readonly add: SettledSink = async (account, ids) => {
    if (this.live.has(account)) return;
    const keys = { acct: accountKeys(this.prefix, account).acct, stage: this.key(account) };
    for (let i = 0; i < ids.length; i += STAGE_SLICE) {
      const pairs = ids.slice(i, i + STAGE_SLICE).flatMap(([id, at]) => [at, id]);
      if (int(await SCRIPTS.stageSettled.run(this.redis, keys, { ttlMs: STAGE_TTL_MS, '...pairs': pairs })) === 0) return void this.live.add(account);
    }
  };
}

/** Restores every record, with the ids `stage` holds for each; returns how many accounts were restored (the others were live). */
export async function restoreAccounts(
  redis: RedisClient,
  prefix: string,
  records: readonly MoneyRecord[],
  stage = new SettledStage(redis, prefix),
): Promise<number> {
  let restored = 0;
  await inParallel(records, PUBLISH_PARALLEL, async (r) => {
    const k = accountKeys(prefix, r.account);
    await redis.sadd(redisKeys(prefix).usageStreams, k.usage);
    const reply = await SCRIPTS.restoreAccount.run(
      redis,
      { acct: k.acct, credits: k.credits, spend: k.spend, stripe: k.stripe, billing: k.billing, settled: k.settled, stage: stage.key(r.account) },
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
  }));
}
