// Audit records in Postgres (table console_audit, migration 019), shared by every console replica on the database.
// The schema is migrated on first use (under the migrations' advisory lock), and again after a failure, so a console
// that starts before its database still records once the database is there.
import type pg from 'pg';
import { migrate } from '../../gateway/usage/postgres/migrate.ts';
import type { AuditFilter, AuditPage, AuditStore } from './store.ts';
import { isAuditAction, type AuditRecord, type AuditOutcome, type SignInMethod } from './record.ts';

interface Row {
  at: Date;
  account: string;
  actor: string;
  subject: string;
  method: string;
  action: string;
  object: string;
  outcome: string;
  status: number;
  detail: string;
  client_ip: string;
  user_agent: string;
}

const COLUMNS = 'at, account, actor, subject, method, action, object, outcome, status, detail, client_ip, user_agent';

function where(f: AuditFilter): { sql: string; args: unknown[] } {
  const args: unknown[] = [f.account];
  const parts = ['account = $1'];
  const add = (clause: (n: number) => string, v: unknown): void => {
    args.push(v);
    parts.push(clause(args.length));
  };
  if (f.action !== undefined) add((n) => `action = $${n}`, f.action);
  // A substring of the user name; LIKE's own characters in what was typed are taken literally.
  if (f.actor !== undefined) add((n) => `actor ILIKE $${n} ESCAPE '\\'`, `%${f.actor.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
  if (f.from !== undefined) add((n) => `at >= $${n}`, new Date(f.from));
  if (f.to !== undefined) add((n) => `at < $${n}`, new Date(f.to));
  return { sql: parts.join(' AND '), args };
}

export class PostgresAuditStore implements AuditStore {
  readonly kind = 'postgres' as const;
  private readonly pool: pg.Pool;
  private ready: Promise<void> | null = null;

  constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  private async migrated(): Promise<void> {
    this.ready ??= migrate(this.pool).then(
      () => undefined,
      (err: unknown) => {
        this.ready = null;
        throw err;
      },
    );
    return this.ready;
  }

  async add(r: AuditRecord): Promise<void> {
    await this.migrated();
    await this.pool.query(`INSERT INTO console_audit (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`, [
      new Date(r.at),
      r.account,
      r.actor,
      r.subject,
      r.method,
      r.action,
      r.object,
      r.outcome,
      r.status,
      r.detail,
      r.clientIp,
      r.userAgent,
    ]);
  }

  async query(f: AuditFilter, offset: number, limit: number): Promise<AuditPage> {
    await this.migrated();
    const w = where(f);
    const [rows, count] = await Promise.all([
      this.pool.query<Row>(
        `SELECT ${COLUMNS} FROM console_audit WHERE ${w.sql} ORDER BY at DESC, id DESC OFFSET $${w.args.length + 1} LIMIT $${w.args.length + 2}`,
        [...w.args, offset, limit],
      ),
      this.pool.query<{ n: string }>(`SELECT count(*)::text AS n FROM console_audit WHERE ${w.sql}`, w.args),
    ]);
    return { rows: rows.rows.flatMap(recordOf), total: Number(count.rows[0]?.n ?? 0) };
  }

  async sweep(before: number): Promise<number> {
    await this.migrated();
    const r = await this.pool.query('DELETE FROM console_audit WHERE at < $1', [new Date(before)]);
    return r.rowCount ?? 0;
  }
}

function recordOf(x: Row): AuditRecord[] {
  if (!isAuditAction(x.action)) return [];
  return [
    {
      at: x.at.getTime(),
      account: x.account,
      actor: x.actor,
      subject: x.subject,
      method: x.method as SignInMethod | '',
      action: x.action,
      object: x.object,
      outcome: x.outcome as AuditOutcome,
      status: x.status,
      detail: x.detail,
      clientIp: x.client_ip,
      userAgent: x.user_agent,
    },
  ];
}
