// Where a gateway process keeps files and batches: Postgres at DATABASE_URL (migrated at start, files sealed with the
// config keyring), else the records it is given (Redis when it has one), else this process's memory. The claims
// that let one process at a time work on a batch stay in Redis (or in this process without one).
import { keyFromPepper, Keyring, keyringFromEnv } from '../contract/sealed-credentials.ts';
import type { Env } from '../options.ts';
import { PostgresBatchRecords } from './postgres-records.ts';
import { MemoryBatchRecords, type BatchRecords } from './records.ts';

export async function openBatchRecords(
  databaseUrl: string | undefined,
  local: BatchRecords | undefined,
  env: Env,
  pepper: string,
  onError: (err: Error) => void,
): Promise<BatchRecords | undefined> {
  if (!databaseUrl) return local;
  const ring = keyringFromEnv(env) ?? new Keyring([keyFromPepper(pepper)]);
  return PostgresBatchRecords.open(databaseUrl, ring, local ?? new MemoryBatchRecords(), onError);
}
