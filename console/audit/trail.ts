// The audit trail: each record goes to the store (Postgres or memory) and to the log, and in a cluster an action on
// an Account becomes an Event on it (keys' Events are written with the ApiKey, console/keys/cluster-backend.ts). A
// store that cannot take a record (Postgres down) never fails the person's action: the record is in the log, at warn.
// Records older than the retention are swept (hourly, and never shown meanwhile).
import type { FastifyBaseLogger } from 'fastify';
import type { AuditFilter, AuditPage, AuditStore } from './store.ts';
import type { AuditRecord } from './record.ts';

export const DAY_MS = 86_400_000;
export const RETENTION_DAYS_DEFAULT = 400;
const SWEEP_EVERY_MS = 3600_000;

/** SVC_CONSOLE_AUDIT_RETENTION_DAYS: a whole number of days, at least 1 (default 400). */
export function retentionDaysFromEnv(env: Record<string, string | undefined>): number {
  const raw = env.SVC_CONSOLE_AUDIT_RETENTION_DAYS?.trim();
  if (!raw) return RETENTION_DAYS_DEFAULT;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 36_500) {
    throw new Error(`SVC_CONSOLE_AUDIT_RETENTION_DAYS must be a whole number of days from 1 to 36500 (got "${raw}").`);
  }
  return n;
}

/** Where an account's actions are announced besides the store: the cluster's Events (best effort). */
export interface AuditAnnouncer {
  announce(r: AuditRecord): Promise<void>;
}

export interface AuditTrailOptions {
  store: AuditStore;
  log: FastifyBaseLogger;
  retentionDays?: number;
  now?: () => number;
  announcer?: AuditAnnouncer;
}

export class AuditTrail {
  readonly store: AuditStore;
  readonly retentionDays: number;
  private readonly log: FastifyBaseLogger;
  private readonly now: () => number;
  private readonly announcer: AuditAnnouncer | undefined;
  private timer: NodeJS.Timeout | null = null;

  constructor(o: AuditTrailOptions) {
    this.store = o.store;
    this.log = o.log;
    this.retentionDays = o.retentionDays ?? RETENTION_DAYS_DEFAULT;
    this.now = o.now ?? Date.now;
    this.announcer = o.announcer;
  }

  /** Never throws: a record the store refused is logged in full (it holds nothing secret) so it is not lost. */
  async record(r: AuditRecord): Promise<void> {
    this.log.info({ audit: r }, 'Console audit record');
    try {
      await this.store.add(r);
    } catch (err) {
      this.log.warn({ err, audit: r }, 'Console audit record not stored (kept in this log line)');
    }
    if (this.announcer && r.account !== '') await this.announcer.announce(r).catch(() => {});
  }

  /** The records the page may show: within the retention even before the next sweep has run. */
  async query(f: AuditFilter, offset: number, limit: number): Promise<AuditPage> {
    const oldest = this.now() - this.retentionDays * DAY_MS;
    return this.store.query({ ...f, from: Math.max(f.from ?? oldest, oldest) }, offset, limit);
  }

  /** Deletes what is past the retention; returns how many records went. */
  async sweep(): Promise<number> {
    const n = await this.store.sweep(this.now() - this.retentionDays * DAY_MS);
    if (n > 0) this.log.info({ deleted: n, retentionDays: this.retentionDays }, 'Console audit records past their retention deleted');
    return n;
  }

  /** Sweeps now and then hourly; stop() ends it. */
  start(): void {
    const run = (): void => void this.sweep().catch((err: unknown) => this.log.warn({ err }, 'Console audit sweep failed (tried again within the hour)'));
    run();
    this.timer = setInterval(run, SWEEP_EVERY_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
