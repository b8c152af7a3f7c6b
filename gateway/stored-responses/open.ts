// Where a gateway process keeps stored Responses: Postgres at DATABASE_URL (migrated at start, sealed with the config
// keyring), else this process's memory.
import type { Env } from '../options.ts';
import { MemoryResponseStore } from './memory.ts';
import { PostgresResponseStore, responsesKeyring } from './postgres.ts';
import type { ResponseStore, StoredResponsesSettings } from './types.ts';

export async function openResponseStore(
  o: StoredResponsesSettings & { databaseUrl: string | undefined },
  env: Env,
  pepper: string,
  onError: (err: Error) => void,
): Promise<{ store: ResponseStore; settings: StoredResponsesSettings }> {
  const settings = { retentionMs: o.retentionMs, accountBytes: o.accountBytes };
  if (!o.databaseUrl) return { store: new MemoryResponseStore(), settings };
  return { store: await PostgresResponseStore.open(o.databaseUrl, responsesKeyring(env, pepper), onError), settings };
}
