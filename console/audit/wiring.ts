// The audit trail from the environment: Postgres when DATABASE_URL is set (shared by every replica), else this
// process's memory (bounded; every record is in the log too); the retention from SVC_CONSOLE_AUDIT_RETENTION_DAYS.
import type { FastifyBaseLogger } from 'fastify';
import type pg from 'pg';
import { PostgresAuditStore } from './postgres-store.ts';
import { MemoryAuditStore } from './store.ts';
import { AuditTrail, retentionDaysFromEnv, type AuditAnnouncer } from './trail.ts';

export function auditTrailFromEnv(
  env: Record<string, string | undefined>,
  o: { pool: pg.Pool | null; log: FastifyBaseLogger; announcer?: AuditAnnouncer },
): AuditTrail {
  return new AuditTrail({
    store: o.pool ? new PostgresAuditStore(o.pool) : new MemoryAuditStore(),
    log: o.log,
    retentionDays: retentionDaysFromEnv(env),
    announcer: o.announcer,
  });
}
