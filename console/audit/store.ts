// Where audit records are kept: Postgres (DATABASE_URL, shared by every console replica) or this process's memory
// (bounded: the oldest records go first). Both answer the Activity page's filters newest first.
import type { AuditAction, AuditRecord } from './record.ts';

export interface AuditFilter {
  /** '' : the console-wide records (sign-ins and sign-outs). */
  account: string;
  action?: AuditAction;
  /** Part of the person's user name, case-insensitive. */
  actor?: string;
  /** ms, inclusive */
  from?: number;
  /** ms, exclusive */
  to?: number;
}

export interface AuditPage {
  rows: AuditRecord[];
  total: number;
}

export interface AuditStore {
  /** Where the records live, for the page ("kept in Postgres", "kept in this process's memory"). */
  readonly kind: 'postgres' | 'memory';
  add(r: AuditRecord): Promise<void>;
  /** Newest first; `offset`/`limit` page through them. */
  query(f: AuditFilter, offset: number, limit: number): Promise<AuditPage>;
  /** Deletes the records older than `before` (ms); returns how many. */
  sweep(before: number): Promise<number>;
}

export function matches(r: AuditRecord, f: AuditFilter): boolean {
  return (
    r.account === f.account &&
    (f.action === undefined || r.action === f.action) &&
    (f.actor === undefined || r.actor.toLowerCase().includes(f.actor.toLowerCase())) &&
    (f.from === undefined || r.at >= f.from) &&
    (f.to === undefined || r.at < f.to)
  );
}

export const MEMORY_MAX = 10_000;

/** Standalone without Postgres: the last `max` records of this process (each is in the log as well). */
export class MemoryAuditStore implements AuditStore {
  readonly kind = 'memory' as const;
  private readonly records: AuditRecord[] = [];
  private readonly max: number;

  constructor(max = MEMORY_MAX) {
    this.max = max;
  }

  async add(r: AuditRecord): Promise<void> {
    this.records.push(r);
    if (this.records.length > this.max) this.records.splice(0, this.records.length - this.max);
  }

  async query(f: AuditFilter, offset: number, limit: number): Promise<AuditPage> {
    const all = this.records.filter((r) => matches(r, f)).reverse();
    // Records arrive in time order, except when two requests finish out of order: sort to be sure (stable).
    all.sort((a, b) => b.at - a.at);
    return { rows: all.slice(offset, offset + limit), total: all.length };
  }

  async sweep(before: number): Promise<number> {
    const n = this.records.length;
    const kept = this.records.filter((r) => r.at >= before);
    this.records.splice(0, n, ...kept);
    return n - kept.length;
  }
}
