// The standalone process's money guard on Redis (gateway/state/money-guard.ts): it publishes this process's manifests,
// and, with DATABASE_URL, rebuilds a Redis that lost its data from the Postgres ledger first. Without DATABASE_URL it
// warns at start that money does not survive a Redis that loses its data. With it, it also settles the usage events an
// exporter committed after a rebuild had read the ledger (gateway/state/late-sweep.ts). It also checks Redis's persistence settings.
import type { Logger } from 'pino';
import { redisKeys } from './contract/redis-keys.ts';
import type { KeyRecord, Snapshot } from './contract/snapshot.ts';
import { LateSweep } from './state/late-sweep.ts';
import { MoneyGuard } from './state/money-guard.ts';
import { checkPersistence } from './state/redis-persistence.ts';
import type { RedisStore } from './state/redis-store.ts';
import { ledgerMoney } from './usage/ledger-money.ts';

export interface StandaloneMoney {
  guard: MoneyGuard;
  close(): Promise<void>;
}

export async function startStandaloneMoney(
  store: RedisStore,
  config: { snapshot: Snapshot; keys: KeyRecord[] },
  databaseUrl: string | undefined,
  logger: Logger,
): Promise<StandaloneMoney> {
  for (const f of (await checkPersistence(store.redis)) ?? [])
    logger.warn({ setting: f.setting, value: f.value }, `Redis ${f.setting} is ${f.value}: ${f.advice}`);
  const ledger = databaseUrl ? ledgerMoney(databaseUrl, (err) => logger.warn({ err: err.message }, 'Postgres connection lost; reconnecting')) : null;
  if (!ledger) {
    logger.warn(
      'No DATABASE_URL: balances, budgets and applied credits live only in Redis. If Redis loses its data they cannot be rebuilt (trials and credits are then not granted again: balances read 0). Run Redis with appendonly yes, or set DATABASE_URL.',
    );
  }
  const guard = new MoneyGuard({
    redis: store.redis,
    prefix: store.prefix,
    publish: () => store.applyConfig(config.snapshot, config.keys),
    record: ledger ? (settled) => ledger.record(settled) : null,
    recordGrants: ledger ? () => ledger.recordGrants(store.redis, store.prefix) : undefined,
    recent: ledger ? (accounts) => ledger.recent(accounts) : undefined,
    accounts: () => Object.values(config.snapshot.accounts),
    log: logger,
  });
  store.watchMoney(guard);
  // Events an exporter committed after a rebuild had read the ledger, settled here (the exporter never writes money).
  const sweep = ledger ? new LateSweep({ redis: store.redis, prefix: store.prefix, queue: ledger.late, log: logger }) : null;
  sweep?.start();
  const close = async (): Promise<void> => {
    await sweep?.stop();
    guard.stop();
    await guard.settled();
    await ledger?.close();
  };
  // A Redis without the marker (fresh, or lost) with a ledger: rebuilt in the background, so the process starts while
  // Postgres is slow or away; /readyz answers 503 and calls 503 store_unavailable until it is done.
  if (ledger && (await store.redis.get(redisKeys(store.prefix).moneyGeneration)) === null) {
    logger.info('No money state in Redis yet: rebuilding it from the Postgres ledger before admitting calls');
    guard.watch();
    guard.kick();
    return { guard, close };
  }
  try {
    await guard.start();
  } catch (err) {
    if (!ledger) {
      await close();
      throw err;
    }
    // Postgres away at start: this Redis stays closed (503) until the ledger answers; the guard keeps trying.
    logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'Cannot rebuild the money state from Postgres yet; answering 503 until it can');
    guard.watch();
  }
  return { guard, close };
}
