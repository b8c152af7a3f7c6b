// Checks accounts on a Redis Cluster against the Postgres ledger after a replica was promoted (catch-up.lua): the
// accounts never checked are marked as checked on their master (armed); those last checked on another node (the
// master lost, its replica promoted) are caught up with the ledger's recent usage events their new master never
// settled, so no settle the lost master applied and the exporter recorded is forgotten (the account could spend it
// again) and none is charged twice (a retried settle of it is a no-op once its id is remembered).
import { accountKeys } from '../contract/redis-keys.ts';
import { inParallel, PUBLISH_PARALLEL } from './parallel.ts';
import { isCluster, type RedisClient } from './redis-connect.ts';
import { SCRIPTS } from './scripts.ts';

/** One usage event as the ledger recorded it: what catch-up.lua settles again where it is missing. */
export interface RecentEvent {
  account: string;
  eventId: string;
  /** The month (YYYY-MM, UTC) the call was admitted in: its hold's month. */
  month: string;
  keyName: string;
  costNano: string;
  feeNano: string;
  cacheHit: boolean;
  savedNano: string;
  atMs: number;
}

/** The ledger's events of these accounts recent enough that a node still remembers settling them (SETTLED_MEMORY_MS). */
export type RecentEvents = (accounts: readonly string[]) => Promise<RecentEvent[]>;

export interface CatchUpResult {
  armed: number;
  caughtUp: number;
  events: number;
  nano: number;
}

function keysOf(prefix: string, account: string): Record<'acct' | 'holds' | 'holdrec' | 'held' | 'spend' | 'settled', string> {
  const k = accountKeys(prefix, account);
  return { acct: k.acct, holds: k.holds, holdrec: k.holdrec, held: k.held, spend: k.spend, settled: k.settled };
}

/** Arms the accounts never checked and catches up those last checked on another node. Nothing on one Redis. */
export async function catchUpAccounts(redis: RedisClient, prefix: string, accounts: readonly string[], recent: RecentEvents): Promise<CatchUpResult> {
  const out: CatchUpResult = { armed: 0, caughtUp: 0, events: 0, nano: 0 };
  if (!isCluster(redis)) return out;
  const stale: string[] = [];
  await inParallel(accounts, PUBLISH_PARALLEL, async (account) => {
    const [verdict] = (await SCRIPTS.catchUp.run(redis, keysOf(prefix, account), { eventsJson: '', arm: '1' })) as [string];
    if (verdict === 'armed') out.armed++;
    if (verdict === 'stale') stale.push(account);
  });
  if (stale.length === 0) return out;
  const byAccount = new Map<string, RecentEvent[]>(stale.map((a) => [a, []]));
  for (const e of await recent(stale)) byAccount.get(e.account)?.push(e);
  await inParallel(stale, PUBLISH_PARALLEL, async (account) => {
    const events = (byAccount.get(account) ?? []).map((e) => [
      e.eventId,
      e.month,
      e.keyName,
      e.costNano,
      e.feeNano,
      e.cacheHit ? '1' : '0',
      e.savedNano,
      e.atMs,
    ]);
    const [verdict, n, nano] = (await SCRIPTS.catchUp.run(redis, keysOf(prefix, account), { eventsJson: JSON.stringify(events), arm: '0' })) as [
      string,
      number,
      string,
    ];
    if (verdict !== 'caught-up') return;
    out.caughtUp++;
    out.events += n;
    out.nano += Number(nano);
  });
  return out;
}
