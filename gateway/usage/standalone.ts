// Where a standalone gateway's usage events go (docs/operations.md: Usage, Postgres and metrics):
//   no DATABASE_URL            kept in memory (the latest 10,000), nothing else;
//   DATABASE_URL               in-memory store: a Postgres sink (bounded queue; see postgres-sink.ts for its limit);
//   DATABASE_URL + REDIS_URL   the Redis store appends events to streams and this process also runs the exporter.
// Postgres is never on the request path: the gateway starts and serves while it is away; the schema migrations
// and the exporter's start are retried in the background until it answers.
import type { Registry } from 'prom-client';
import type { Snapshot } from '../contract/snapshot.ts';
import { MemoryUsageSink, type UsageSink } from './event.ts';
import type { Log } from './exporter/log.ts';
import { startExporter, type RunningExporter } from './exporter/start.ts';
import { recordCredits } from './postgres/credits.ts';
import { migrate } from './postgres/migrate.ts';
import { createPool } from './postgres/pool.ts';
import { PostgresUsageSink } from './postgres-sink.ts';

export interface StandaloneUsage {
  /** The sink the in-memory store emits to (unused with Redis: the store writes the streams). */
  sink: UsageSink;
  close(): Promise<void>;
}

export interface StandaloneUsageOptions {
  databaseUrl?: string;
  redisUrl?: string;
  redisPrefix?: string;
  registry: Registry;
  log: Log;
  /** The manifests' config: its credits go to the ledger (memory mode; with Redis the exporter reads them). */
  snapshot: Snapshot;
}

export function standaloneUsage(o: StandaloneUsageOptions): StandaloneUsage {
  if (!o.databaseUrl) return { sink: new MemoryUsageSink(), close: async () => {} };
  return o.redisUrl ? withExporter(o, o.redisUrl, o.databaseUrl) : withSink(o, o.databaseUrl);
}

function withSink(o: StandaloneUsageOptions, databaseUrl: string): StandaloneUsage {
  const pool = createPool(databaseUrl, { onError: (err) => o.log.warn({ err }, 'Postgres connection lost; reconnecting') });
  const sink = new PostgresUsageSink({
    pool,
    log: o.log,
    registry: o.registry,
    before: async () => {
      await migrate(pool);
      await recordCredits(pool, o.snapshot);
    },
  });
  return {
    sink,
    close: async () => {
      await sink.close();
      await pool.end().catch(() => {});
    },
  };
}

function withExporter(o: StandaloneUsageOptions, redisUrl: string, databaseUrl: string): StandaloneUsage {
  let running: RunningExporter | null = null;
  let closed = false;
  const attempt = async (n: number): Promise<void> => {
    try {
      const r = await startExporter({ redisUrl, databaseUrl, prefix: o.redisPrefix ?? 'svc', registry: o.registry, log: o.log });
      if (closed) await r.stop();
      else running = r;
    } catch (err) {
      o.log.warn({ err: err instanceof Error ? err.message : String(err), attempt: n }, 'Cannot start the usage exporter yet; retrying');
      if (!closed) setTimeout(() => void attempt(n + 1), Math.min(10_000, 500 * 2 ** Math.min(n, 5))).unref();
    }
  };
  void attempt(0);
  return {
    sink: new MemoryUsageSink(),
    close: async () => {
      closed = true;
      await running?.stop();
    },
  };
}
