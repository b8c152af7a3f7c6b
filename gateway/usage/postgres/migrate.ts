// Versioned schema migrations (migrations/NNN_name.sql), applied in order, each in its own transaction, under a
// session advisory lock: several exporters starting at once apply each migration exactly once. A migration that
// changed after it was applied is refused (its checksum is recorded), so a schema never drifts silently.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';

const DIR = fileURLToPath(new URL('./migrations/', import.meta.url));
/** pg_advisory_lock key: the ASCII of "svcusage" read as a 64-bit integer, fixed so every version agrees. */
const LOCK_KEY = '8319946717711656805';

export interface Migration {
  version: number;
  name: string;
  sql: string;
  checksum: string;
}

export function migrations(dir = DIR): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{3}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((f) => {
      const sql = readFileSync(`${dir}${f}`, 'utf8');
      return { version: Number(f.slice(0, 3)), name: f.slice(4, -4), sql, checksum: createHash('sha256').update(sql).digest('hex') };
    });
}

export class MigrationError extends Error {}

/** Applies the migrations missing from the database; returns the names applied by this call. */
export async function migrate(pool: pg.Pool, list: Migration[] = migrations()): Promise<string[]> {
  const client = await pool.connect();
  let broken: unknown;
  try {
    await client.query('SELECT pg_advisory_lock($1)', [LOCK_KEY]);
    await client.query(`CREATE TABLE IF NOT EXISTS usage_schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const { rows } = await client.query<{ version: number; name: string; checksum: string }>('SELECT version, name, checksum FROM usage_schema_migrations');
    const done = new Map(rows.map((r) => [r.version, r]));
    const applied: string[] = [];
    for (const m of list) {
      const prior = done.get(m.version);
      if (prior) {
        if (prior.checksum !== m.checksum) {
          throw new MigrationError(
            `Migration ${m.version}_${m.name} differs from the one applied on ${prior.name}: never edit an applied migration, add a new one.`,
          );
        }
        continue;
      }
      await client.query('BEGIN');
      try {
        await client.query(m.sql);
        await client.query('INSERT INTO usage_schema_migrations (version, name, checksum) VALUES ($1, $2, $3)', [m.version, m.name, m.checksum]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw new MigrationError(`Migration ${m.version}_${m.name} failed: ${err instanceof Error ? err.message : String(err)}`);
      }
      applied.push(`${String(m.version).padStart(3, '0')}_${m.name}`);
    }
    return applied;
  } catch (err) {
    broken = err;
    throw err;
  } finally {
    // The session lock goes with the session: a broken connection is destroyed, which releases it too.
    const healthy = broken === undefined || broken instanceof MigrationError;
    if (healthy) await client.query('SELECT pg_advisory_unlock($1)', [LOCK_KEY]).catch(() => {});
    client.release(healthy ? undefined : true);
  }
}
