// SVC_SETTLE_DURABILITY=postgres: each call's usage event is written to the Postgres ledger as part of its settle,
// before the answer ends (the pipeline settles first in that mode: GatewayDeps.settleBeforeAnswer), so a Redis that
// loses its data loses no served call's money. The write is the exporter's own statement (INSERT ... ON CONFLICT DO
// NOTHING on the event id, the daily rollup grown by the rows that were new): when the exporter copies the same event
// from the Redis stream later, nothing is added, so each event is in the ledger exactly once.
//
// Order and failure: Redis settles first (the charge and the stream entry, atomic); then the event is written here.
// A write that fails is retried once; if Postgres still refuses, the call is answered anyway (the upstream has served
// it; failing it now would charge a call the client never got) and its event waits in the Redis stream for the
// exporter, as without the setting: counted in svc_gateway_settle_durable_total{result="failed"} and logged. While
// Postgres keeps failing, calls skip the write for a few seconds (result "skipped") instead of each waiting for it.
// Nothing is charged twice either way: Redis's charge is one step, and the ledger keys every row by its event id.
//
// Calls settling at the same time share one statement (group commit): while one write is in flight, the next events
// wait and go together in the following one, so the cost per call falls as the load rises.
import { Counter, Histogram, type Registry } from 'prom-client';
import type pg from 'pg';
import type { Hold, PartSettle, Settlement, Store } from '../state/store.ts';
import type { UsageEvent } from './event.ts';
import type { Log } from './exporter/log.ts';
import { eventParams, INSERT_EVENTS } from './postgres/insert-sql.ts';
import { migrate } from './postgres/migrate.ts';
import { monthKey, Partitions } from './postgres/partitions.ts';
import { createPool } from './postgres/pool.ts';

export type SettleDurability = 'redis' | 'postgres';
export const SETTLE_DURABILITIES: readonly SettleDurability[] = ['redis', 'postgres'];

/** After a write failed twice, calls skip the write this long (their events wait in Redis for the exporter). */
const OPEN_MS = 5_000;
/** Events in one statement at most. */
const MAX_BATCH = 500;

export interface DurableSettleOptions {
  pool: pg.Pool;
  log: Log;
  registry: Registry;
  /** The clock (tests). */
  now?: () => number;
}

interface Waiting {
  event: UsageEvent;
  done: (ok: boolean) => void;
}

export type DurableResult = 'written' | 'duplicate' | 'failed' | 'skipped';

export class DurableSettle {
  private readonly o: DurableSettleOptions;
  private readonly partitions: Partitions;
  private readonly results: Counter<'result'>;
  private readonly seconds: Histogram;
  private migrated = false;
  private queue: Waiting[] = [];
  private writing: Promise<void> | null = null;
  private openUntil = 0;

  constructor(o: DurableSettleOptions) {
    this.o = o;
    this.partitions = new Partitions(o.pool);
    this.results = new Counter({
      name: 'svc_gateway_settle_durable_total',
      help: 'SVC_SETTLE_DURABILITY=postgres: usage events written to Postgres before the answer ended, by result (written, duplicate, failed, skipped: left to the exporter).',
      labelNames: ['result'],
      registers: [o.registry],
    });
    this.seconds = new Histogram({
      name: 'svc_gateway_settle_durable_seconds',
      help: 'SVC_SETTLE_DURABILITY=postgres: time a call waited for its usage event to be committed in Postgres.',
      buckets: [0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [o.registry],
    });
  }

  private now(): number {
    return (this.o.now ?? Date.now)();
  }

  /** Writes the event (with those settling at the same time); resolves once it is committed, or given up on (false). */
  async write(event: UsageEvent): Promise<boolean> {
    if (this.now() < this.openUntil) {
      this.results.inc({ result: 'skipped' });
      return false;
    }
    const t0 = performance.now();
    const ok = await new Promise<boolean>((done) => {
      this.queue.push({ event, done });
      this.kick();
    });
    this.seconds.observe((performance.now() - t0) / 1000);
    return ok;
  }

  private kick(): void {
    if (this.writing || this.queue.length === 0) return;
    const batch = this.queue.splice(0, MAX_BATCH);
    this.writing = this.flush(batch).finally(() => {
      this.writing = null;
      this.kick();
    });
  }

  private async flush(batch: Waiting[]): Promise<void> {
    const events = batch.map((w) => w.event);
    let inserted: number | null = null;
    for (let attempt = 0; attempt < 2 && inserted === null; attempt++) {
      try {
        inserted = await this.insert(events);
      } catch (err) {
        if (attempt === 1) {
          this.openUntil = this.now() + OPEN_MS;
          this.o.log.warn(
            { err: err instanceof Error ? err.message : String(err), events: events.length },
            'Cannot write usage events to Postgres before answering; they wait in Redis for the usage exporter (SVC_SETTLE_DURABILITY)',
          );
        }
      }
    }
    if (inserted === null) this.results.inc({ result: 'failed' }, events.length);
    else {
      this.results.inc({ result: 'written' }, inserted);
      if (events.length > inserted) this.results.inc({ result: 'duplicate' }, events.length - inserted);
    }
    for (const w of batch) w.done(inserted !== null);
  }

  /** One statement (atomic on its own): the events and the daily rollup; returns the rows that were new. */
  private async insert(events: UsageEvent[]): Promise<number> {
    if (!this.migrated) {
      // The exporter migrates too (under an advisory lock); this process may write first.
      await migrate(this.o.pool);
      this.migrated = true;
    }
    await this.partitions.ensure(events.map((e) => monthKey(e.createdAt)));
    const unique = [...new Map(events.map((e) => [e.eventId, e])).values()];
    const r = await this.o.pool.query<{ inserted: number }>(INSERT_EVENTS, eventParams(unique));
    return r.rows[0]?.inserted ?? 0;
  }
}

/** The store whose settle also writes the call's usage event to Postgres (after Redis settled it). */
export function withDurableSettle(store: Store, durable: DurableSettle): Store {
  return {
    applyConfig: (snapshot, keys) => store.applyConfig(snapshot, keys),
    findKey: (hash) => store.findKey(hash),
    admit: (req) => store.admit(req),
    settle: async (hold: Hold, s: Settlement): Promise<void> => {
      // Redis refused the settle: nothing was charged there, so nothing is written here (the hold expires).
      await store.settle(hold, s);
      await durable.write(s.event);
    },
    record: (event) => store.record(event),
    view: (account, keyName, now) => store.view(account, keyName, now),
    close: () => store.close(),
    ...(store.responseCache ? { responseCache: store.responseCache } : {}),
    ...(store.parts ? { parts: durableParts(store.parts, durable) } : {}),
  };
}

/** A batch line's event is committed in Postgres after its charge, as a call's is after its settle. */
function durableParts(parts: PartSettle, durable: DurableSettle): PartSettle {
  return {
    settleLine: async (hold, s) => {
      await parts.settleLine(hold, s);
      await durable.write(s.event);
    },
    release: (hold, now) => parts.release(hold, now),
  };
}

/** SVC_SETTLE_DURABILITY=postgres for a gateway process: its own small pool on DATABASE_URL, short waits. */
export function startDurableSettle(databaseUrl: string, registry: Registry, log: Log): { durable: DurableSettle; close(): Promise<void> } {
  const pool = createPool(databaseUrl, {
    max: 4,
    statementTimeoutMs: 5_000,
    onError: (err) => log.warn({ err: err.message }, 'Postgres connection lost (SVC_SETTLE_DURABILITY); reconnecting'),
  });
  return { durable: new DurableSettle({ pool, log, registry }), close: () => pool.end().catch(() => {}) };
}

/** The process's store as SVC_SETTLE_DURABILITY asks: unchanged (redis), or writing each settle to Postgres too. */
export function durableStore(
  store: Store,
  settle: { durability: 'redis' } | { durability: 'postgres'; databaseUrl: string },
  registry: Registry,
  log: Log,
): { store: Store; before: boolean; close(): Promise<void> } {
  if (settle.durability === 'redis') return { store, before: false, close: async () => {} };
  const d = startDurableSettle(settle.databaseUrl, registry, log);
  return { store: withDurableSettle(store, d.durable), before: true, close: d.close };
}
