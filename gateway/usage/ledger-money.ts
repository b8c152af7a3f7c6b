// The Postgres ledger as the record a Redis that lost its data is rebuilt from (gateway/state/money-guard.ts): read
// every account's money, and copy to it at once the credits a publish granted, so a loss right after a publish cannot
// grant them again. Used by the standalone gateway with DATABASE_URL and by the operator's leader.
import type { LateQueue } from '../state/late-sweep.ts';
import type { RecentEvent } from '../state/money-catch-up.ts';
import type { MoneyRecord, SettledSink } from '../state/money-record.ts';
import type { RedisClient } from '../state/redis-connect.ts';
import { monthOf } from '../state/store.ts';
import { syncCredits } from './exporter/credit-sync.ts';
import { migrate } from './postgres/migrate.ts';
import { readMoneyRecords } from './postgres/money-record.ts';
import { readRecentEvents } from './postgres/recent-events.ts';
import { lateQueue } from './postgres/late-settles.ts';
import { createPool } from './postgres/pool.ts';

export interface LedgerMoney {
  /** Every account's money; the recent event ids go to `settled` as they are read. */
  record(settled: SettledSink): Promise<MoneyRecord[]>;
  recordGrants(redis: RedisClient, prefix: string): Promise<void>;
  /** The recent usage events of these accounts (a promoted replica's catch-up). */
  recent(accounts: readonly string[]): Promise<RecentEvent[]>;
  /** The events the exporter committed after a rebuild may have read the ledger, waiting to be settled in Redis. */
  late: LateQueue;
  close(): Promise<void>;
}

export function ledgerMoney(databaseUrl: string, onError: (err: Error) => void): LedgerMoney {
  const pool = createPool(databaseUrl, { max: 2, onError });
  const queue = lateQueue(pool);
  // The queue's table may be newer than the ledger the exporter made: migrated once, before the first look.
  let migrated: Promise<unknown> | null = null;
  const ready = async (): Promise<void> => {
    migrated ??= migrate(pool);
    try {
      await migrated;
    } catch (err) {
      migrated = null;
      throw err;
    }
  };
  return {
    record: async (settled) => {
      await migrate(pool);
      return readMoneyRecords(pool, monthOf(Date.now()), settled);
    },
    recordGrants: async (redis, prefix) => void (await syncCredits(redis, pool, prefix)),
    recent: async (accounts) => {
      await migrate(pool);
      return readRecentEvents(pool, accounts);
    },
    late: {
      take: async (limit) => {
        await ready();
        return queue.take(limit);
      },
      done: (ids) => queue.done(ids),
    },
    close: () => pool.end().catch(() => {}),
  };
}
