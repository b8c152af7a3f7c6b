// Detects a Redis that lost its data and rebuilds its money from the record before it admits a call again.
//
// The generation marker (<p>:money:generation, a random id) is written once the money state in Redis is complete:
// published on a fresh Redis, or rebuilt from Postgres. Every process checks it when its connection becomes ready
// (a reconnect: Redis restarted, failed over), every CHECK_MS, when a lookup finds no key record, and when a money
// script refuses. Inside Redis, each account's record carries `trial` once its money is there: admit, settle and
// /v1/me refuse an account without it (lib.lua), so between the loss and the rebuild callers get 503
// store_unavailable with retry-after (never 401: key records vanish with the rest) and settles wait to be retried.
//
// Who rebuilds (one process at a time, under <p>:money:rebuild-lock):
//   with a record (DATABASE_URL): every account's money from the Postgres ledger, then the config (which grants only
//     what the ledger never recorded), then the marker;
//   without one: the process that saw this Redis live and then lost marks each account's trial and credits as granted
//     with no money (it cannot know the balances; granting them again could give money twice), publishes, logs an
//     error. A process starting on a Redis without a marker cannot tell a fresh Redis from a lost one: it publishes.
//   a cluster-mode gateway rebuilds nothing (it does not publish): it answers 503 until the operator has.
//
// On a Redis Cluster, one shard may lose its data while the others keep theirs (a master without a replica restarted
// empty), or a replica that lagged behind may be promoted. The marker lives in one slot, so it cannot tell: every
// slot has a marker of its own too (slot-markers.ts). A key record missing where its slot's marker is gone answers
// 503, and the periodic check reads one marker per slot range: a shard without them is repaired (the accounts whose
// money is gone restored from the ledger, the config published again, the markers written). With a ledger, each
// account's record names the master it was checked on (lib.lua `node`): a promoted replica refuses the account until
// it is caught up with the ledger's recent settles it never saw (money-catch-up.ts); the check runs when a money
// script refuses and when the periodic check sees a slot range served by another master.
import { randomBytes } from 'node:crypto';
import { redisKeys } from '../contract/redis-keys.ts';
import type { MoneyRecord, SettledSink } from './money-record.ts';
import { catchUpAccounts, type RecentEvents } from './money-catch-up.ts';
import { forgottenRecords, restoreAccounts, SettledStage } from './money-restore.ts';
import { isCluster, type RedisClient } from './redis-connect.ts';
import { slotKept, slotLayout, writeSlotMarkers } from './slot-markers.ts';

export const CHECK_MS = 2000;
/** Longest a rebuild may hold the lock (a process that dies mid-rebuild frees it after this). */
const LOCK_MS = 10 * 60_000;
/** Shortest time between two repairs of accounts gone from a Redis that kept the rest. */
const REPAIR_MS = 5_000;

/** What a store asks of the guard (RedisStore.findKey, and every money script that refuses). */
export interface MoneyWatch {
  /** True when this Redis has no money state now, or (given) the key's Cluster slot lost its data (at most two GETs). */
  missing(key?: string): Promise<boolean>;
  /** A money script refused an account without its state: look again soon. */
  unready(): void;
}

export interface GuardLog {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

export interface MoneyGuardOptions {
  redis: RedisClient;
  prefix: string;
  /** Publishes this process's config (key records, accounts: trial and credits once by id); null: it publishes nothing. */
  publish: (() => Promise<void>) | null;
  /** The money record (the Postgres ledger), its recent event ids handed to `settled` as they are read; null without DATABASE_URL. */
  record: ((settled: SettledSink) => Promise<MoneyRecord[]>) | null;
  /** After a publish: the credits it granted, copied to the record at once (so a loss right after cannot grant them again). */
  recordGrants?: () => Promise<void>;
  /** The ledger's recent usage events of some accounts (a promoted Redis Cluster replica's catch-up); absent without one. */
  recent?: RecentEvents;
  /** The config's accounts (for a rebuild without a record). */
  accounts: () => ReadonlyArray<{ name: string; credits: ReadonlyArray<{ id: string }> }>;
  log: GuardLog;
  checkMs?: number;
}

export type MoneyState = 'unknown' | 'live' | 'lost';

export class MoneyGuard implements MoneyWatch {
  private readonly o: MoneyGuardOptions;
  private readonly marker: string;
  private readonly lock: string;
  /** The generation this process last saw (null: none yet). */
  private seen: string | null = null;
  private current: MoneyState = 'unknown';
  private running: Promise<void> | null = null;
  /** A money script refused an account while the marker is there: part of the data is gone (evicted, a lost shard). */
  private repair = false;
  private lastRepair = 0;
  private again = false;
  /** Every account of the config marked as checked on its Cluster master (again after each publish of this process). */
  private armed = false;
  /** The Cluster's slot ranges and their masters at the last check. */
  private masters: string | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly onReady = (): void => {
    this.current = 'unknown';
    this.kick();
  };
  /** How long the last rebuild took (ms), for the log and the docs' figure. */
  lastRebuildMs: number | null = null;

  constructor(o: MoneyGuardOptions) {
    this.o = o;
    const k = redisKeys(o.prefix);
    this.marker = k.moneyGeneration;
    this.lock = k.moneyRebuildLock;
  }

  get state(): MoneyState {
    return this.current;
  }

  /** The first check, at start: publishes (or rebuilds) before the process serves. Then watches. */
  async start(): Promise<void> {
    await this.check(true);
    this.watch();
  }

  /** Checks on every reconnect and every CHECK_MS (start does it after its first check). */
  watch(): void {
    if (this.timer) return;
    this.o.redis.on('ready', this.onReady);
    this.timer = setInterval(() => this.kick(), this.o.checkMs ?? CHECK_MS).unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.o.redis.off('ready', this.onReady);
  }

  async missing(key?: string): Promise<boolean> {
    if (this.current === 'lost') return true;
    const gen = await this.o.redis.get(this.marker);
    if (gen !== null) {
      this.seen ??= gen;
      if (key === undefined || (await slotKept(this.o.redis, this.o.prefix, key))) return false;
      // The key's shard lost its data while the marker's kept it: repaired by whoever has the record (503 meanwhile).
      this.repair = true;
      this.kick();
      return true;
    }
    // Never saw a marker (a publisher that writes none, or nothing published yet): an unknown key is just unknown.
    if (this.seen === null) return false;
    this.current = 'lost';
    this.kick();
    return true;
  }

  unready(): void {
    this.repair = true;
    this.kick();
  }

  /** Runs a check now, or once more after the one running (never two at once). */
  kick(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.check(false)
      .catch((err: unknown) => this.o.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'Money state check failed; retrying'))
      .finally(() => {
        this.running = null;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  /**
   * Publishes now (the operator's config controller): on a live Redis at once; on one that lost its data, after the
   * rebuild (which publishes).
   */
  async publish(): Promise<void> {
    await this.running;
    const gen = await this.o.redis.get(this.marker);
    // Not over a shard that lost its data: its accounts are restored first (a publish would grant their trial again).
    const layout = await slotLayout(this.o.redis, this.o.prefix);
    if (gen !== null && gen === this.seen && this.o.publish && !layout?.lost) {
      this.armed = false;
      await this.o.publish();
      this.current = 'live';
      return;
    }
    await this.check(false);
    if (this.current !== 'live') throw new Error('Redis lost its money state and it is not rebuilt yet (another process may be rebuilding it)');
  }

  /** Waits for the check running now, if any (tests and stop). */
  async settled(): Promise<void> {
    await this.running;
  }

  private async check(atStart: boolean): Promise<void> {
    const gen = await this.o.redis.get(this.marker);
    if (gen !== null) {
      // Another process rebuilt (or this is our first look): our config on top, idempotent.
      // A shard that lost its data, or a replica promoted: the accounts there are repaired (read before a publish).
      const layout = await slotLayout(this.o.redis, this.o.prefix);
      if (layout?.lost) this.repair = true;
      if (layout && this.masters !== null && layout.masters !== this.masters) this.armed = false;
      if (gen !== this.seen && this.o.publish && !layout?.lost) {
        await this.o.publish();
        this.armed = false;
      }
      this.seen = gen;
      this.current = 'live';
      if (layout) this.masters = layout.masters;
      if (!this.armed && this.o.recent && isCluster(this.o.redis)) {
        const r = await catchUpAccounts(this.o.redis, this.o.prefix, this.accountNames(), this.o.recent);
        this.armed = true;
        this.logCatchUp(r);
      }
      // Accounts whose money is gone while the rest is there: restored from the record (a live account is left as it
      // is), at most every REPAIR_MS. Without a record an evicted account stays 503 (never granted twice); a Cluster
      // shard that lost its slot markers is treated as a whole Redis lost here (its accounts' trial and credits marked
      // as granted with no money, the config published again, so its key records come back).
      const shardLost = layout?.lost === true && this.o.publish !== null;
      if (((this.repair && this.o.record) || shardLost) && Date.now() - this.lastRepair >= REPAIR_MS) {
        this.repair = false;
        this.lastRepair = Date.now();
        await this.rebuild(true, true);
      }
      return;
    }
    const lostHere = this.seen !== null;
    if (!this.o.publish) {
      // A reader (cluster-mode gateway): closed once it saw this Redis live and then without its marker.
      if (lostHere) this.current = 'lost';
      return;
    }
    this.current = 'lost';
    if (!this.o.record && !lostHere) {
      // A fresh Redis, or one lost while this process was away: nothing tells them apart without a record.
      if (!atStart) return;
      await this.o.publish();
      const mine = newGeneration();
      await this.o.redis.set(this.marker, mine, 'NX');
      this.seen = await this.o.redis.get(this.marker);
      // Written by the process whose marker won (not by every process starting together). Not written (a Cluster too
      // busy now, or that process gone): the periodic check finds them missing and writes them with a repair.
      if (this.seen === mine)
        await writeSlotMarkers(this.o.redis, this.o.prefix, mine).catch((err: unknown) =>
          this.o.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'Redis Cluster slot markers not written yet; retrying'),
        );
      this.current = this.seen === null ? 'lost' : 'live';
      return;
    }
    await this.rebuild(lostHere);
  }

  private accountNames(): string[] {
    return this.o.accounts().map((a) => a.name);
  }

  private logCatchUp(r: { armed: number; caughtUp: number; events: number; nano: number }): void {
    if (r.caughtUp === 0) return;
    this.o.log.warn(
      { accounts: r.caughtUp, events: r.events, nano: r.nano },
      `A Redis Cluster replica promoted had missed ${r.events} settles (${r.nano / 1e9} USD) the Postgres ledger holds: caught up`,
    );
  }

  private async rebuild(lostHere: boolean, partial = false): Promise<void> {
    const token = newGeneration();
    if ((await this.o.redis.set(this.lock, token, 'PX', LOCK_MS, 'NX')) !== 'OK') return; // another process rebuilds
    const t0 = Date.now();
    try {
      if (!partial && (await this.o.redis.get(this.marker)) !== null) return; // it finished just before
      const stage = new SettledStage(this.o.redis, this.o.prefix);
      const records = this.o.record ? await this.o.record(stage.add) : forgottenRecords(this.o.accounts());
      const restored = await restoreAccounts(this.o.redis, this.o.prefix, records, stage);
      await this.o.publish?.();
      await this.o.recordGrants?.();
      // Accounts of a promoted replica: caught up with the ledger's settles it never saw (armed: checked on it).
      if (this.o.recent) {
        this.logCatchUp(await catchUpAccounts(this.o.redis, this.o.prefix, this.accountNames(), this.o.recent));
        this.armed = true;
      }
      const gen = partial ? (this.seen ?? (await this.o.redis.get(this.marker)) ?? newGeneration()) : newGeneration();
      await writeSlotMarkers(this.o.redis, this.o.prefix, gen);
      if (!partial) {
        await this.o.redis.set(this.marker, gen);
        this.seen = gen;
        this.current = 'live';
      }
      this.lastRebuildMs = Date.now() - t0;
      if (partial && restored === 0) return;
      const fields = { accounts: restored, durationMs: this.lastRebuildMs, partial };
      if (this.o.record) this.o.log.info({ ...fields, lostHere }, 'Rebuilt the money state in Redis from the Postgres ledger');
      else
        this.o.log.error(
          fields,
          'Redis lost its data and there is no DATABASE_URL to rebuild balances from: trials and credits are marked as granted with no money (never granted twice); balances are 0 until a new credit id is added',
        );
    } finally {
      await this.o.redis.eval(RELEASE, 1, this.lock, token).catch(() => {});
    }
  }
}

/** Deletes the lock only if it is still ours (a rebuild slower than LOCK_MS must not free another's). */
const RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";

function newGeneration(): string {
  return randomBytes(12).toString('hex');
}
