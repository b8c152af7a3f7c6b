// Starts an exporter on a Redis and a Postgres: schema migrations first (safe when replicas start together),
// then partitions ahead, then the loop. Used by the exporter's command and by the standalone gateway.
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Registry } from 'prom-client';
import { createRedis, redisConnectionFromEnv, type RedisConnection } from '../../state/redis-connect.ts';
import { migrate } from '../postgres/migrate.ts';
import { createPool } from '../postgres/pool.ts';
import { UsageExporter, type ExporterOptions } from './exporter.ts';
import type { Log } from './log.ts';
import { ExporterMetrics } from './metrics.ts';
import { MoneyReconciler } from './reconcile.ts';

export interface StartOptions extends Partial<Omit<ExporterOptions, 'redis' | 'pool' | 'metrics' | 'log'>> {
  redisUrl: string;
  /** Cluster, TLS and client certificate settings; default: from the environment (SVC_REDIS_CLUSTER, SVC_REDIS_CA_FILE...). */
  redisConnection?: Omit<RedisConnection, 'url'>;
  databaseUrl: string;
  registry: Registry;
  log: Log;
}

export interface RunningExporter {
  exporter: UsageExporter;
  reconciler: MoneyReconciler;
  consumer: string;
  stop(): Promise<void>;
}

export function consumerName(): string {
  return `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
}

export async function startExporter(o: StartOptions): Promise<RunningExporter> {
  const pool = createPool(o.databaseUrl, { onError: (err) => o.log.warn({ err }, 'Postgres connection lost; reconnecting') });
  // Its own connection, patient: the exporter waits out a Redis restart instead of failing like the request path.
  const connection = { ...(o.redisConnection ?? redisConnectionFromEnv(o.redisUrl, process.env)), url: o.redisUrl };
  const redis = createRedis(connection, { lazyConnect: true, maxRetriesPerRequest: 2, commandTimeout: 10_000, retryDelayMs: (n) => Math.min(200 * n, 2_000) });
  redis.on('error', () => {});
  try {
    await redis.connect();
    const applied = await migrate(pool);
    if (applied.length > 0) o.log.info({ applied }, 'Applied usage schema migrations');
  } catch (err) {
    redis.disconnect();
    await pool.end().catch(() => {});
    throw err;
  }
  const consumer = o.consumer ?? consumerName();
  const exporter = new UsageExporter({ ...o, prefix: o.prefix ?? 'svc', consumer, redis, pool, metrics: new ExporterMetrics(o.registry) });
  exporter.start();
  // Redis's money against the Postgres ledger, every SVC_RECONCILE_SECONDS (0: never).
  const everySec = Number(process.env.SVC_RECONCILE_SECONDS ?? 60);
  const reconciler = new MoneyReconciler({ redis, pool, prefix: o.prefix ?? 'svc', registry: o.registry, log: o.log, everyMs: everySec * 1000 });
  if (Number.isFinite(everySec) && everySec > 0) reconciler.start();
  o.log.info({ consumer }, 'Started usage exporter');
  return {
    exporter,
    consumer,
    reconciler,
    stop: async () => {
      await reconciler.stop();
      await exporter.stop();
      redis.disconnect();
      await pool.end().catch(() => {});
    },
  };
}
