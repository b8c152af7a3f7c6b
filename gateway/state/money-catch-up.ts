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
    const [verdict, n, nano] = await runEvents(redis, prefix, account, byAccount.get(account) ?? [], '0');
    if (verdict !== 'caught-up') return;
    out.caughtUp++;
    out.events += n;
    out.nano += Number(nano);
  });
  return out;
}

async function runEvents(
  redis: RedisClient,
  prefix: string,
  account: string,
  list: readonly RecentEvent[],
  arm: '0' | 'late',
): Promise<[string, number, string]> {
  const events = list.map((e) => [e.eventId, e.month, e.keyName, e.costNano, e.feeNano, e.cacheHit ? '1' : '0', e.savedNano, e.atMs]);
  return (await SCRIPTS.catchUp.run(redis, keysOf(prefix, account), { eventsJson: JSON.stringify(events), arm })) as [string, number, string];
}

/**
 * Events the exporter read from a Redis that then lost its data and committed to the ledger after a rebuild may have
 * read it: each is settled in the rebuilt Redis unless it is settled there already (counted by the rebuild, which
 * remembers the ids it counted, or settled again by a gateway's retry), so the rebuilt money holds every ledger event
 * exactly once. Accounts whose money is not back yet are left out: returns their names, to be tried again.
 */
export async function settleLateEvents(
  redis: RedisClient,
  prefix: string,
  events: readonly RecentEvent[],
): Promise<{ pending: string[]; events: number; nano: number }> {
  const out = { pending: [] as string[], events: 0, nano: 0 };
  const byAccount = Map.groupBy(events, (e) => e.account);
  await inParallel([...byAccount.keys()], PUBLISH_PARALLEL, async (account) => {
    const [verdict, n, nano] = await runEvents(redis, prefix, account, byAccount.get(account) ?? [], 'late');
    if (verdict === 'lost') out.pending.push(account);
    out.events += n;
    out.nano += Number(nano);
  });
  return out;
}
