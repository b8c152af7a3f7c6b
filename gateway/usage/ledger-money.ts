// The Postgres ledger as the record a Redis that lost its data is rebuilt from (gateway/state/money-guard.ts): read
// every account's money, and copy to it at once the credits a publish granted, so a loss right after a publish cannot
// grant them again. Used by the standalone gateway with DATABASE_URL and by the operator's leader.
import type { MoneyRecord } from '../state/money-record.ts';
import type { RedisClient } from '../state/redis-connect.ts';
import { monthOf } from '../state/store.ts';
import { syncCredits } from './exporter/credit-sync.ts';
import { migrate } from './postgres/migrate.ts';
import { readMoneyRecords } from './postgres/money-record.ts';
import { createPool } from './postgres/pool.ts';

export interface LedgerMoney {
  record(): Promise<MoneyRecord[]>;
  recordGrants(redis: RedisClient, prefix: string): Promise<void>;
  close(): Promise<void>;
}

export function ledgerMoney(databaseUrl: string, onError: (err: Error) => void): LedgerMoney {
  const pool = createPool(databaseUrl, { max: 2, onError });
  return {
    record: async () => {
      await migrate(pool);
      return readMoneyRecords(pool, monthOf(Date.now()));
    },
    recordGrants: async (redis, prefix) => void (await syncCredits(redis, pool, prefix)),
    close: () => pool.end().catch(() => {}),
  };
}
