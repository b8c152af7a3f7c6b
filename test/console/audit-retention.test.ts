// The audit trail's retention and filters on both stores (real Postgres, and memory), run past expiry with an
// injected clock: a record is shown until its retention ends, hidden from then on even before the sweep runs, and
// deleted by the sweep; filters (action, person with LIKE's own characters, dates) and pages behave the same on both.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresAuditStore } from '../../console/audit/postgres-store.ts';
import type { AuditRecord } from '../../console/audit/record.ts';
import { MemoryAuditStore, type AuditStore } from '../../console/audit/store.ts';
import { AuditTrail, DAY_MS, retentionDaysFromEnv } from '../../console/audit/trail.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';

let db: TestPostgres;

beforeAll(async () => {
  db = await startPostgres('console-audit-retention');
}, 120_000);

afterAll(async () => {
  await db?.stop();
});

const T0 = Date.UTC(2026, 0, 10, 12, 0, 0);

function rec(over: Partial<AuditRecord>): AuditRecord {
  return {
    at: T0,
    account: 'demo',
    actor: 'alice@example.com',
    subject: 'alice',
    method: 'oidc',
    action: 'key-created',
    object: 'k1',
    outcome: 'success',
    status: 201,
    detail: '',
    clientIp: '192.0.2.1',
    userAgent: 'test',
    ...over,
  };
}

const stores: Array<[string, () => Promise<AuditStore>]> = [
  ['memory', async () => new MemoryAuditStore()],
  [
    'postgres',
    async () => {
      await db.pool.query('DROP TABLE IF EXISTS console_audit').catch(() => {});
      await db.pool.query('DELETE FROM usage_schema_migrations WHERE version = 19').catch(() => {});
      return new PostgresAuditStore(db.pool);
    },
  ],
];

describe.each(stores)('audit trail on %s', (_name, make) => {
  it('keeps a record for the retention, hides it after, and the sweep deletes it', async () => {
    let now = T0;
    const trail = new AuditTrail({ store: await make(), log: pino({ level: 'silent' }), retentionDays: 30, now: () => now });
    await trail.record(rec({ at: T0 }));
    await trail.record(rec({ at: T0 + 20 * DAY_MS, object: 'k2' }));
    now = T0 + 30 * DAY_MS - 1;
    expect((await trail.query({ account: 'demo' }, 0, 10)).rows.map((r) => r.object)).toEqual(['k2', 'k1']);
    expect(await trail.sweep()).toBe(0);
    // Past the first record's retention: hidden at once, before any sweep.
    now = T0 + 30 * DAY_MS + 1;
    expect((await trail.query({ account: 'demo' }, 0, 10)).rows.map((r) => r.object)).toEqual(['k2']);
    expect(await trail.sweep()).toBe(1);
    expect((await trail.store.query({ account: 'demo' }, 0, 10)).total).toBe(1);
    now = T0 + 60 * DAY_MS;
    expect(await trail.sweep()).toBe(1);
    expect((await trail.store.query({ account: 'demo' }, 0, 10)).total).toBe(0);
  });

  it('filters by account, action, person and dates, newest first, in pages', async () => {
    const store = await make();
    for (let i = 0; i < 7; i++) await store.add(rec({ at: T0 + i * 3600_000, object: `k${i}`, actor: i % 2 ? 'bob_x@example.com' : 'alice@example.com' }));
    await store.add(rec({ at: T0, account: 'other', object: 'elsewhere' }));
    await store.add(rec({ at: T0 + DAY_MS, action: 'key-revoked', object: 'r1' }));
    const all = await store.query({ account: 'demo' }, 0, 100);
    expect(all.total).toBe(8);
    expect(all.rows.map((r) => r.object)).toEqual(['r1', 'k6', 'k5', 'k4', 'k3', 'k2', 'k1', 'k0']);
    const page2 = await store.query({ account: 'demo' }, 3, 3);
    expect([page2.total, page2.rows.map((r) => r.object)]).toEqual([8, ['k4', 'k3', 'k2']]);
    expect((await store.query({ account: 'demo', action: 'key-revoked' }, 0, 10)).rows.map((r) => r.object)).toEqual(['r1']);
    // Part of the name, any case; "_" is a character here, not LIKE's wildcard.
    expect((await store.query({ account: 'demo', actor: 'BOB_X' }, 0, 10)).rows.map((r) => r.object)).toEqual(['k5', 'k3', 'k1']);
    expect((await store.query({ account: 'demo', actor: 'b_b' }, 0, 10)).total).toBe(0);
    const day = await store.query({ account: 'demo', from: T0 + 2 * 3600_000, to: T0 + 5 * 3600_000 }, 0, 10);
    expect(day.rows.map((r) => r.object)).toEqual(['k4', 'k3', 'k2']);
  });
});

describe('SVC_CONSOLE_AUDIT_RETENTION_DAYS', () => {
  it.each([
    [undefined, 400],
    ['30', 30],
    [' 7 ', 7],
  ])('%j gives %d days', (v, days) => {
    expect(retentionDaysFromEnv({ SVC_CONSOLE_AUDIT_RETENTION_DAYS: v })).toBe(days);
  });

  it.each(['0', '-1', '1.5', 'forever', '99999'])('refuses %j, saying what it takes', (v) => {
    expect(() => retentionDaysFromEnv({ SVC_CONSOLE_AUDIT_RETENTION_DAYS: v })).toThrow(/whole number of days from 1 to 36500/);
  });
});
