// `node gateway/main.ts --cluster` (npm run gateway): config, keys and state come from Redis only, as the operator
// wrote them. The gateway never talks to Kubernetes and never writes config.
import type { Logger } from 'pino';
import type { FastifyInstance } from 'fastify';
import { RedisBoard } from './availability/board.ts';
import { TargetHealth } from './availability/health.ts';
import { RedisConfigSource } from './config/redis-config-source.ts';
import { serveGatewayMetrics, type MetricsServer } from './http/metrics-server.ts';
import { Drain } from './lifecycle/drain.ts';
import { gatewayLogger } from './logger.ts';
import { gatewayOptions, type ClusterOptions, type Env } from './options.ts';
import { build } from './server.ts';
import { RedisLastUsed, withLastUsed } from './state/last-used.ts';
import { createRedis } from './state/redis-connect.ts';
import { redactUrl } from './state/redis-env.ts';
import { startTracing } from './tracing/start.ts';
import { RedisStore } from './state/redis-store.ts';
import { openBatchRecords } from './batches/open.ts';
import type { BatchRecords } from './batches/records.ts';
import { RedisBatchRecords } from './batches/redis-records.ts';
import { MoneyGuard } from './state/money-guard.ts';
import { Metrics } from './http/metrics.ts';
import { durableStore } from './usage/durable-settle.ts';
import { openResponseStore } from './stored-responses/open.ts';

export { CLUSTER_NEEDS } from './options.ts';

export interface ClusterGateway {
  app: FastifyInstance;
  address: string;
  /** Port of /metrics, /healthz and /readyz (SVC_METRICS_PORT), never the API port. */
  metricsPort: number;
  /** http://host:port of that listener. */
  metricsUrl: string;
  /** The process's logger: main.ts ends it (endLogs) after stop(). */
  logger: Logger;
  stop(): Promise<void>;
}

/** Starts the cluster-mode gateway from the environment (tests); throws an Error with a readable message. */
export function startClusterGateway(env: Env, port: number): Promise<ClusterGateway> {
  const opts = gatewayOptions({ cluster: true, port: String(port) }, env);
  if (opts.mode !== 'cluster') throw new Error('unreachable: cluster options expected');
  return startCluster(opts);
}

/** Starts the cluster-mode gateway; throws an Error with a readable message when it cannot. */
export async function startCluster(opts: ClusterOptions): Promise<ClusterGateway> {
  const drain = new Drain();
  const logger = gatewayLogger(opts.logLevel);
  const log = {
    info: (m: string): void => logger.info(m),
    warn: (m: string, err?: unknown): void => logger.warn({ err }, m),
  };
  let store: RedisStore;
  try {
    store = await RedisStore.connect({ ...opts.redis, onWarning: log.warn });
  } catch (err) {
    throw new Error(`Cannot use Redis at ${redactUrl(opts.redis.url)}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  // Reads the money marker (gateway/state/money-guard.ts): once it saw this Redis live, a Redis that lost its data
  // answers 503 for unknown keys (their records are gone) until the operator's leader has rebuilt it. Publishes nothing.
  const money = new MoneyGuard({ redis: store.redis, prefix: store.prefix, publish: null, record: null, accounts: () => [], log: logger });
  store.watchMoney(money);
  money.watch();
  money.kick();
  // Its own connection (a subscribed client runs nothing else); a Cluster subscribes on one node and hears every publish.
  const subscriber = createRedis(opts.redis);
  subscriber.on('error', (err: unknown) => log.warn('Redis subscriber connection error', err));
  const source = new RedisConfigSource({ redis: store.redis, subscriber, prefix: store.prefix, keyring: opts.keyring, pollMs: opts.pollMs, log });
  const tracing = await startTracing(opts.env, 'svc-gateway');
  const metricsOfProcess = new Metrics({ exemplars: tracing !== null });
  if (store.leases) metricsOfProcess.watchLeases(store.leases);
  metricsOfProcess.watchSettles(store);
  // Each admitted call touches its key's "last used" (at most one HSET a minute per key), which the console shows.
  let responses: Awaited<ReturnType<typeof openResponseStore>>;
  try {
    responses = await openResponseStore(opts.responses, opts.env, opts.pepper, (err) => logger.warn({ err }, 'Stored responses: Postgres error'));
  } catch (err) {
    await source.close();
    money.stop();
    await store.close();
    throw new Error(`Cannot keep stored responses in Postgres: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  let batchRecords: BatchRecords | undefined;
  try {
    batchRecords = await openBatchRecords(opts.responses.databaseUrl, new RedisBatchRecords(store.redis, store.prefix), opts.env, opts.pepper, (err) =>
      logger.warn({ err }, 'Files and batches: Postgres error'),
    );
  } catch (err) {
    await responses.store.close();
    await source.close();
    money.stop();
    await store.close();
    throw new Error(`Cannot keep files and batches in Postgres: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  const durable = durableStore(withLastUsed(store, new RedisLastUsed(store.redis, store.prefix)), opts.settle, metricsOfProcess.registry, logger);
  const {
    app,
    deps,
    metrics: gatewayMetrics,
  } = await build({
    config: source,
    store: durable.store,
    settleBeforeAnswer: durable.before,
    metrics: metricsOfProcess,
    pepper: opts.pepper,
    ready: () => source.ready(),
    drain,
    logger,
    timeouts: opts.timeouts,
    tracing,
    cacheAccountBytes: opts.cacheAccountBytes,
    keyCacheSize: opts.keyCacheSize,
    mcp: opts.mcp,
    responses,
    // Every gateway replica runs the batch job; one works on a batch at a time (a claim in Redis). Files and batches
    // are kept in Postgres with DATABASE_URL, else in Redis.
    uploads: opts.uploads,
    batches: { settings: opts.batches, ...(batchRecords ? { records: batchRecords } : {}) },
  });
  // Target states from the operator leader's probes (read every 2 s): a target in major_outage is tried last; this
  // gateway's upstream outcomes are added to the board every 5 s in one pipeline.
  const health = new TargetHealth(new RedisBoard(store.redis, store.prefix), {
    onError: (err) => log.warn('Availability board not read or written', err),
  }).start();
  deps.availability = health;
  gatewayMetrics.alerts.watchTargets(() => health.targets());
  await source.start();
  if (!source.ready()) app.log.warn('No config in Redis yet: not ready until the operator publishes one');
  let address: string;
  let metrics: MetricsServer & { url: string };
  try {
    address = await app.listen({ port: opts.port, host: opts.host });
    // Same readiness as the API port's /readyz; it keeps answering (503 draining) while the API port drains.
    metrics = await serveGatewayMetrics(gatewayMetrics.registry, opts.metrics, () => (drain.draining ? 'draining' : source.ready()), gatewayMetrics.exemplars);
  } catch (err) {
    await health.close();
    await app.close();
    await source.close();
    money.stop();
    await store.close();
    await durable.close();
    throw err;
  }
  return {
    app,
    address,
    metricsPort: metrics.port,
    metricsUrl: metrics.url,
    logger,
    stop: async () => {
      await drain.run(app, opts.drainMs, app.log);
      await health.close();
      await source.close();
      money.stop();
      await store.close();
      await durable.close();
      await metrics.close();
    },
  };
}
