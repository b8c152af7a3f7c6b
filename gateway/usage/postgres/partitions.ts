// Monthly partitions of usage_events: created ahead (this month and the next ones) and on demand for an event
// from any other month (a late replay, a skewed clock), so an insert never lacks its partition. There is no
// default partition: one would block creating the month it overlaps once it held rows.
import type pg from 'pg';

export const MONTHS_AHEAD = 3;

/** First instant (UTC) of the month holding `iso`, as "YYYY-MM". */
export function monthKey(iso: string | number | Date): string {
  return new Date(iso).toISOString().slice(0, 7);
}

export function monthsFrom(now: number, ahead = MONTHS_AHEAD): string[] {
  const d = new Date(now);
  const out: string[] = [];
  for (let i = 0; i <= ahead; i++) out.push(new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + i, 1)).toISOString().slice(0, 7));
  return out;
}

/** Remembers the months known to exist, so the hot path asks Postgres only for a month it has not seen. */
export class Partitions {
  private readonly known = new Set<string>();
  private readonly pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  /** Ensures each month's partition exists ("YYYY-MM"); returns how many this call created. */
  async ensure(months: Iterable<string>): Promise<number> {
    let created = 0;
    for (const m of new Set(months)) {
      if (this.known.has(m)) continue;
      const r = await this.pool.query<{ created: boolean }>('SELECT usage_ensure_partition($1::timestamptz) AS created', [`${m}-01T00:00:00Z`]);
      if (r.rows[0]?.created) created++;
      this.known.add(m);
    }
    return created;
  }

  ahead(now = Date.now()): Promise<number> {
    return this.ensure(monthsFrom(now));
  }
}
