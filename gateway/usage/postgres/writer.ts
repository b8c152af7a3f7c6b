// Writes a batch of usage events to Postgres in one transaction: all or nothing, idempotent by event id. A row
// Postgres rejects for its data is found by halving the batch and parked in usage_dead_letters, so one bad row
// never blocks the others; any other failure is thrown for the caller to retry the whole batch (rows committed by
// an earlier half are then duplicates, which ON CONFLICT DO NOTHING skips).
import type pg from 'pg';
import type { UsageEvent } from '../event.ts';
import type { PoisonReason } from '../event-schema.ts';
import { errorText, isDataError } from './errors.ts';
import { eventParams, INSERT_DEAD_LETTERS, INSERT_EVENTS } from './insert-sql.ts';
import { monthKey, Partitions } from './partitions.ts';

export interface Row {
  /** Where the event came from: the stream's name, or "memory". */
  source: string;
  /** Its id there: the stream entry id, or the event id. */
  entryId: string;
  event: UsageEvent;
}

export interface DeadLetter {
  source: string;
  entryId: string;
  eventId: string | null;
  reason: PoisonReason;
  detail: string;
  /** The entry as it was read, as JSON. */
  payload: string;
}

export interface WriteResult {
  /** Rows new to usage_events. */
  inserted: number;
  /** The event ids of those rows. */
  insertedIds: string[];
  /** Rows already there (redelivered), skipped. */
  duplicates: number;
  /** Dead letters newly parked, by reason. */
  parked: PoisonReason[];
}

export class UsageWriter {
  private readonly pool: pg.Pool;
  readonly partitions: Partitions;

  constructor(pool: pg.Pool) {
    this.pool = pool;
    this.partitions = new Partitions(pool);
  }

  async write(rows: readonly Row[], dead: readonly DeadLetter[] = []): Promise<WriteResult> {
    const unique = dedupe(rows);
    await this.partitions.ensure(unique.map((r) => monthKey(r.event.createdAt)));
    const result = await this.split(unique, dead);
    result.duplicates += rows.length - unique.length;
    return result;
  }

  private async split(rows: readonly Row[], dead: readonly DeadLetter[]): Promise<WriteResult> {
    try {
      return await this.commit(rows, dead);
    } catch (err) {
      if (!isDataError(err)) throw err;
      if (rows.length <= 1) {
        const r = rows[0];
        if (!r) throw err; // the dead letters themselves were refused: nothing sensible to park them in
        return this.split([], [...dead, rejected(r, err)]);
      }
      const half = Math.ceil(rows.length / 2);
      const a = await this.split(rows.slice(0, half), dead);
      const b = await this.split(rows.slice(half), []);
      return {
        inserted: a.inserted + b.inserted,
        insertedIds: [...a.insertedIds, ...b.insertedIds],
        duplicates: a.duplicates + b.duplicates,
        parked: [...a.parked, ...b.parked],
      };
    }
  }

  private async commit(rows: readonly Row[], dead: readonly DeadLetter[]): Promise<WriteResult> {
    const client = await this.pool.connect();
    let failed: unknown;
    try {
      await client.query('BEGIN');
      let inserted = 0;
      let insertedIds: string[] = [];
      if (rows.length > 0) {
        const r = await client.query<{ inserted: number; ids: string[] }>(INSERT_EVENTS, eventParams(rows.map((x) => x.event)));
        inserted = r.rows[0]?.inserted ?? 0;
        insertedIds = r.rows[0]?.ids ?? [];
      }
      let parked: PoisonReason[] = [];
      if (dead.length > 0) {
        const cols = [
          dead.map((d) => d.source),
          dead.map((d) => d.entryId),
          dead.map((d) => d.eventId),
          dead.map((d) => d.reason),
          dead.map((d) => clean(d.detail)),
          dead.map((d) => clean(d.payload)),
        ];
        parked = (await client.query<{ reason: PoisonReason }>(INSERT_DEAD_LETTERS, cols)).rows.map((x) => x.reason);
      }
      await client.query('COMMIT');
      return { inserted, insertedIds, duplicates: rows.length - inserted, parked };
    } catch (err) {
      failed = err;
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      // A connection that failed for any reason but the data is dropped, not reused.
      client.release(failed !== undefined && !isDataError(failed));
    }
  }
}

function dedupe(rows: readonly Row[]): Row[] {
  const seen = new Set<string>();
  return rows.filter((r) => !seen.has(r.event.eventId) && seen.add(r.event.eventId));
}

function rejected(r: Row, err: unknown): DeadLetter {
  return {
    source: r.source,
    entryId: r.entryId,
    eventId: r.event.eventId,
    reason: 'rejected_by_postgres',
    detail: errorText(err),
    payload: JSON.stringify(r.event),
  };
}

/** Postgres text cannot hold NUL; JSON payloads are escaped already, details may not be. */
function clean(s: string): string {
  return s.replaceAll('\u0000', '\\u0000');
}
