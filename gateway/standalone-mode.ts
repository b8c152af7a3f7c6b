// `npm start`: the standalone gateway. Config from manifest files (or the demo), state in memory or in Redis
// (REDIS_URL: the process publishes its manifests there), usage in memory or Postgres, and the console on the same
// port. Returns what it printed and how to stop; throws an Error with a readable message when it cannot start.
import type { Logger } from 'pino';
import { startSlaJob, type RunningSlaJob } from '../billing/sla/sla-job.ts';
import { slaJobInputs } from '../billing/wiring.ts';
import { mountStandaloneConsole, type StandaloneConsoleOptions } from '../console/standalone.ts';
import { mountStatusPages } from '../console/status/mount.ts';
import { declaredIncidents } from './availability/declared.ts';
import type { History } from './availability/history.ts';
import { PostgresHistory } from './availability/postgres-history.ts';
import { localAvailability } from './availability/standalone.ts';
import { ConfigError, loadStandaloneConfig } from './config/standalone.ts';
import { Metrics } from './http/metrics.ts';
import { serveGatewayMetrics } from './http/metrics-server.ts';
import { Drain } from './lifecycle/drain.ts';
import { gatewayLogger } from './logger.ts';
import type { StandaloneOptions } from './options.ts';
import { build } from './server.ts';
import { MemoryLastUsed, RedisLastUsed, withLastUsed, type LastUsed } from './state/last-used.ts';
import { MemoryStore } from './state/memory-store.ts';
import { redactUrl, sharedKeys } from './state/redis-env.ts';
import { startTracing } from './tracing/start.ts';
import { startStandaloneMoney, type StandaloneMoney } from './standalone-money.ts';
import { RedisStore } from './state/redis-store.ts';
import { openBatchRecords } from './batches/open.ts';
import type { BatchRecords } from './batches/records.ts';
import { RedisBatchRecords } from './batches/redis-records.ts';
import type { Store } from './state/store.ts';
import { forwardingLog } from './usage/exporter/log.ts';
import { durableStore } from './usage/durable-settle.ts';
import { openResponseStore } from './stored-responses/open.ts';
import { standaloneUsage } from './usage/standalone.ts';

export interface Standalone {
  /** http://host:port of the API (0.0.0.0 shown as 127.0.0.1). */
  url: string;
  metricsUrl: string;
  /** Keys generated for this run (shown once). */
  generated: Array<{ apiKey: string; account: string; key: string }>;
  /** The console's admin token when it was generated (null: it came from SVC_CONSOLE_TOKEN). */
  consoleToken: string | null;
  /** The process's logger: main.ts ends it (endLogs) after stop(). */
  logger: Logger;
  stop(): Promise<void>;
}

interface State {
  store: Store;
  /** Stops the money guard (Redis only). */
  closeMoney?: () => Promise<void>;
  /** Redis holds the money state (not lost, not being rebuilt): /readyz. */
  ready?: () => boolean;
  backing: StandaloneConsoleOptions['backing'];
  lastUsed: LastUsed;
  configKeys: ReturnType<typeof loadStandaloneConfig>['keys'];
  generated: Standalone['generated'];
}

export async function startStandalone(opts: StandaloneOptions): Promise<Standalone> {
  const logger = gatewayLogger(opts.logLevel);
  let config;
  try {
    config = loadStandaloneConfig(opts.configPath, opts.pepper);
  } catch (err) {
    if (err instanceof ConfigError) throw new Error(err.message, { cause: err });
    throw err;
  }
  const tracing = await startTracing(opts.env, 'svc-gateway');
  const metrics = new Metrics({ exemplars: tracing !== null });
  const usageLog = forwardingLog();
  const usage = standaloneUsage({
    databaseUrl: opts.databaseUrl,
    redisUrl: opts.redis?.url,
    redisPrefix: opts.redisPrefix,
    registry: metrics.registry,
    log: usageLog,
    snapshot: config.snapshot,
  });
  usageLog.attach(logger);
  const state = opts.redis ? await onRedis(opts, config, logger) : await inMemory(config, usage.sink);
  if (state.backing.kind === 'redis' && state.backing.store.leases) metrics.watchLeases(state.backing.store.leases);
  if (state.backing.kind === 'redis') metrics.watchSettles(state.backing.store);
  const snapshot = config.snapshot;
  const drain = new Drain();
  let responses: Awaited<ReturnType<typeof openResponseStore>>;
  try {
    responses = await openResponseStore(opts.responses, opts.env, opts.pepper, (err) => logger.warn({ err }, 'Stored responses: Postgres error'));
  } catch (err) {
    await state.store.close();
    await usage.close();
    throw new Error(`Cannot keep stored responses in Postgres: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  let batchRecords: BatchRecords | undefined;
  try {
    const local = state.backing.kind === 'redis' ? new RedisBatchRecords(state.backing.store.redis, state.backing.store.prefix) : undefined;
    batchRecords = await openBatchRecords(opts.databaseUrl, local, opts.env, opts.pepper, (err) => logger.warn({ err }, 'Files and batches: Postgres error'));
  } catch (err) {
    await responses.store.close();
    await state.store.close();
    await usage.close();
    throw new Error(`Cannot keep files and batches in Postgres: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  const durable = durableStore(withLastUsed(state.store, state.lastUsed), opts.settle, metrics.registry, usageLog);
  const { app, deps } = await build({
    config: { current: () => snapshot },
    store: durable.store,
    settleBeforeAnswer: durable.before,
    ready: state.ready,
    pepper: opts.pepper,
    metrics,
    drain,
    logger,
    timeouts: opts.timeouts,
    trustProxy: opts.trustProxy,
    tracing,
    cacheAccountBytes: opts.cacheAccountBytes,
    keyCacheSize: opts.keyCacheSize,
    mcp: opts.mcp,
    responses,
    // Files and batches in Postgres with DATABASE_URL; else beside the money: in Redis when the processes share one
    // (any of them runs a batch), else here.
    uploads: opts.uploads,
    batches: { settings: opts.batches, ...(batchRecords ? { records: batchRecords } : {}) },
  });
  let mounted: Awaited<ReturnType<typeof mountStandaloneConsole>>;
  try {
    mounted = await mountStandaloneConsole(app, {
      snapshot,
      configKeys: state.configKeys,
      pepper: opts.pepper,
      backing: state.backing,
      lastUsed: state.lastUsed,
      env: opts.env,
    });
  } catch (err) {
    await state.store.close();
    throw new Error(`Cannot start the console: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  // The process probes its own targets; states in memory, or on Redis where other gateways read them; history and
  // incidents in memory, or in Postgres with DATABASE_URL (/status, /trust).
  const declared = declaredIncidents(config.incidents);
  const redisBoard = state.backing.kind === 'redis' ? { client: state.backing.store.redis, prefix: state.backing.store.prefix } : undefined;
  const history = opts.databaseUrl ? await PostgresHistory.open(opts.databaseUrl) : undefined;
  const availability = localAvailability({
    snapshot: () => snapshot,
    env: opts.env,
    redis: redisBoard,
    declared: () => declared,
    history,
    onError: (err) => logger.warn({ err }, 'Availability: a probe round or a board read failed'),
  });
  deps.availability = availability.health;
  metrics.alerts.watchTargets(() => availability.health.targets());
  const sla = slaJob(opts, mounted.billing, availability.history, logger);
  await mountStatusPages(app, { source: availability.source, env: opts.env });
  for (const w of config.warnings) logger.warn({ source: w.source, object: w.object, field: w.field }, w.message);
  const address = await app.listen({ port: opts.port, host: opts.host });
  let metricsServer: Awaited<ReturnType<typeof serveGatewayMetrics>>;
  try {
    metricsServer = await serveGatewayMetrics(
      metrics.registry,
      opts.metrics,
      () => (drain.draining ? 'draining' : (state.ready?.() ?? true)),
      metrics.exemplars,
    );
  } catch (err) {
    await sla?.stop();
    await app.close();
    await state.store.close();
    await durable.close();
    await usage.close();
    throw err;
  }
  return {
    url: address.replace('0.0.0.0', '127.0.0.1'),
    metricsUrl: metricsServer.url,
    generated: state.generated,
    consoleToken: mounted.generatedToken,
    logger,
    stop: async () => {
      await sla?.stop();
      await drain.run(app, opts.drainMs, app.log);
      await availability.close();
      await state.closeMoney?.();
      await state.store.close();
      await durable.close();
      await usage.close();
      await metricsServer.close();
    },
  };
}

/**
 * The SLA job on this process's billing ledger (every process may run it: the credit sla-YYYY-MM is one exactly-once
 * ledger step), from the process's status history; null when there are no statements to take the spend from.
 */
function slaJob(
  opts: StandaloneOptions,
  billing: Awaited<ReturnType<typeof mountStandaloneConsole>>['billing'],
  history: Pick<History, 'segments'>,
  logger: ReturnType<typeof gatewayLogger>,
): RunningSlaJob | null {
  const inputs = slaJobInputs(billing);
  if (!inputs) return null;
  return startSlaJob({
    ...inputs,
    history: opts.sla?.history ?? history,
    intervalMs: opts.sla?.intervalMs,
    settleMs: opts.sla?.settleMs,
    now: opts.sla?.now,
    onResult: (account, o, r) =>
      logger.info(
        { account, month: o.month, uptime: o.uptime, creditPercent: o.creditPercent, creditNano: o.creditNano, verdict: r?.verdict ?? 'nothing to credit' },
        'SLA month settled',
      ),
    onError: (err, account) => logger.warn({ err, account }, 'SLA job: a month not settled yet (retried on the next round)'),
  });
}

type Config = ReturnType<typeof loadStandaloneConfig>;

async function inMemory(config: Config, sink: ReturnType<typeof standaloneUsage>['sink']): Promise<State> {
  const memory = new MemoryStore(sink);
  await memory.applyConfig(config.snapshot, config.keys);
  return {
    store: memory,
    backing: { kind: 'memory', store: memory, sink },
    lastUsed: new MemoryLastUsed(),
    configKeys: config.keys,
    generated: config.generated,
  };
}

/** Publishes this process's manifests to the shared Redis (idempotent; credits applied once by id). */
async function onRedis(opts: StandaloneOptions, config: Config, logger: ReturnType<typeof gatewayLogger>): Promise<State> {
  const redisOpts = opts.redis as NonNullable<StandaloneOptions['redis']>;
  const shared = sharedKeys(config.keys, config.generated);
  let redis: RedisStore;
  try {
    redis = await RedisStore.connect({ ...redisOpts, onWarning: (m, e) => logger.warn({ err: e }, m) });
  } catch (err) {
    throw new Error(`Cannot use Redis at ${redactUrl(redisOpts.url)}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  let money: StandaloneMoney;
  try {
    // Publishes the manifests; on a Redis that lost its data, rebuilds its money from Postgres first.
    money = await startStandaloneMoney(redis, { snapshot: config.snapshot, keys: shared.keys }, opts.databaseUrl, logger);
  } catch (err) {
    await redis.close();
    throw new Error(`Cannot publish the config to Redis at ${redactUrl(redisOpts.url)}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  for (const name of shared.skipped) {
    logger.warn(
      `ApiKey ${name} has no key in its Secret, so it gets none: with REDIS_URL every process must know the same key. Put one in the Secret (data key "key").`,
    );
  }
  let up = false;
  return {
    store: redis,
    closeMoney: () => money.close(),
    // Not ready until the money state is there the first time (a later loss answers 503 per call, with retry-after).
    ready: () => (up ||= money.guard.state === 'live'),
    backing: { kind: 'redis', store: redis },
    lastUsed: new RedisLastUsed(redis.redis, redis.prefix),
    configKeys: shared.keys,
    generated: [],
  };
}
