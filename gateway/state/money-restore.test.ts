// A rebuild's restore of one account (gateway/state/money-restore.ts) with many recently settled ids: they are staged a
// slice at a time (a busy account's hundreds of thousands never block Redis in one step) and become the account's
// settled set in the restore's atomic step; nothing is staged for, or left behind by, a live account. Real Redis.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, type TestRedis } from '../../test/helpers/redis.ts';
import { accountKeys, settledStage } from '../contract/redis-keys.ts';
import type { MoneyRecord } from './money-record.ts';
import { restoreAccounts, SettledStage } from './money-restore.ts';
import { RedisStore } from './redis-store.ts';
import { SCRIPTS } from './scripts.ts';
import { account, keyRec, snapshot, usage } from './store-suite-fixtures.ts';
import type { Hold } from './store.ts';

let redis: TestRedis;
let n = 0;

beforeAll(async () => {
  // Its own server: the test counts the scripts it runs.
  redis = await startRedis('money-restore', { own: true });
});
afterAll(async () => {
  await redis?.stop();
});

const T = Date.UTC(2026, 10, 30, 12, 0, 0);

const record: MoneyRecord = {
  account: 'acme',
  trialNano: 1_000_000,
  creditIds: [],
  creditedNano: 1_000_000,
  spentNano: 5_000,
  feeNano: 0,
  spend: {},
  stripe: [],
};

/** `n` recent ids, remembered from `from` on. */
function ids(n: number, from = T): Array<[string, number]> {
  return Array.from({ length: n }, (_, i) => [`call-${i}`, from + i] as [string, number]);
}

/** Restores `record` for acme with `n` ids staged first (as a rebuild stages them while it reads the ledger). */
async function restoreWith(store: RedisStore, prefix: string, n: number, from = T): Promise<number> {
  const stage = new SettledStage(store.redis, prefix);
  await stage.add('acme', ids(n, from));
  return restoreAccounts(store.redis, prefix, [record], stage);
}

/** A store on a prefix of its own, closed after `f`. */
async function withStore(f: (store: RedisStore, prefix: string) => Promise<void>): Promise<void> {
  const prefix = `${redis.prefix}-${++n}`;
  const store = await RedisStore.connect({ url: redis.url, prefix });
  try {
    await f(store, prefix);
  } finally {
    await store.close();
  }
}

async function scriptsRun(store: RedisStore): Promise<number> {
  const info = await store.redis.info('commandstats');
  return [...info.matchAll(/cmdstat_(?:evalsha|eval):calls=(\d+)/g)].reduce((t, m) => t + Number(m[1]), 0);
}

describe('restoring an account with many recently settled ids', () => {
  it('stages 12,001 ids in three slices, then the restore makes them the settled set: a retried settle of one charges nothing', async () => {
    await withStore(async (store, prefix) => {
      const k = accountKeys(prefix, 'acme');
      // Both scripts loaded first (a script's first run on a server is one EVALSHA refused, then EVAL).
      const other = new SettledStage(store.redis, prefix);
      await other.add('other', ids(1));
      await restoreAccounts(store.redis, prefix, [{ ...record, account: 'other' }], other);
      const before = await scriptsRun(store);
      expect(await restoreWith(store, prefix, 12_001)).toBe(1);
      // Three staging steps (5,000 ids each at most) and the restore.
      expect((await scriptsRun(store)) - before).toBe(4);
      expect(await store.redis.zcard(k.settled)).toBe(12_001);
      expect(await store.redis.zscore(k.settled, 'call-12000')).toBe(String(T + 12_000));
      expect(await store.redis.pttl(k.settled)).toBe(-1);
      expect(await store.redis.keys(`${prefix}:*:settled:stage:*`)).toEqual([]);
      // A settle Redis applied before the loss, retried now by its gateway: no second charge.
      await store.applyConfig(snapshot([account()]), [keyRec()]);
      const hold: Hold = { id: 'call-7', account: 'acme', key: 'k1', tokens: 10, holdNano: 1000, month: '2026-11' };
      await store.settle(hold, { costNano: 900, tokens: 10, event: usage(hold, 900, T) });
      expect((await store.ledger('acme')).spentNano).toBe(5_000);
    });
  });

  it('a live account: nothing restored, nothing staged or left behind, its settled set untouched', async () => {
    await withStore(async (store, prefix) => {
      await store.applyConfig(snapshot([account()]), [keyRec()]);
      const k = accountKeys(prefix, 'acme');
      expect(await restoreWith(store, prefix, 7_000)).toBe(0);
      expect(await store.redis.exists(k.settled)).toBe(0);
      expect(await store.redis.keys(`${prefix}:*:settled:stage:*`)).toEqual([]);
    });
  });

  it('ids staged by a process that died before its restore are dropped on their own', async () => {
    await withStore(async (store, prefix) => {
      const stage = settledStage(prefix, 'acme', 'dead');
      const k = accountKeys(prefix, 'acme');
      expect(await SCRIPTS.stageSettled.run(store.redis, { acct: k.acct, stage }, { ttlMs: 600_000, '...pairs': [T, 'call-1', T + 1, 'call-2'] })).toBe(1);
      expect(await store.redis.zcard(stage)).toBe(2);
      const ttl = await store.redis.pttl(stage);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(600_000);
    });
  });
  it('ids remembered at once leave at most 1,000 per settle once past their memory, never in one long step', async () => {
    await withStore(async (store, prefix) => {
      const k = accountKeys(prefix, 'acme');
      // 2,500 ids a rebuild remembered ten hours before the settles below: past the settled memory.
      expect(await restoreWith(store, prefix, 2_500, T - 10 * 3_600_000)).toBe(1);
      await store.applyConfig(snapshot([account()]), [keyRec()]);
      const left: number[] = [];
      for (let i = 0; i < 4; i++) {
        const hold: Hold = { id: `new-${i}`, account: 'acme', key: 'k1', tokens: 10, holdNano: 1000, month: '2026-11' };
        await store.settle(hold, { costNano: 1, tokens: 1, event: usage(hold, 1, T) });
        left.push((await store.redis.zcount(k.settled, '-inf', T - 3_600_000)) as number);
      }
      expect(left).toEqual([1_500, 500, 0, 0]);
      // The new settles' ids are remembered.
      expect(await store.redis.zcard(k.settled)).toBe(4);
    });
  });
});
