// The Postgres pool the usage writers use: bounded waits everywhere, so an outage shows up as errors to retry,
// never as a writer hung on a dead socket.
import pg from 'pg';

export interface PoolOptions {
  max?: number;
  /** Longest wait for one statement, server side and client side (default 60 s). */
  statementTimeoutMs?: number;
  onError?: (err: Error) => void;
}

export function createPool(url: string, opts: PoolOptions = {}): pg.Pool {
  const timeout = opts.statementTimeoutMs ?? 60_000;
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.max ?? 4,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    statement_timeout: timeout,
    query_timeout: timeout + 5_000,
    keepAlive: true,
    application_name: 'svc-gateway-usage',
  });
  // An idle client losing its server (restart, failover) must not crash the process; the next query reconnects.
  pool.on('error', (err) => opts.onError?.(err));
  return pool;
}

/** The URL without its password, for messages. */
export function redactDatabaseUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparseable DATABASE_URL)';
  }
}
